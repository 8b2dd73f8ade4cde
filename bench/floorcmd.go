package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/floor"
	"github.com/aditus-queue/aditus-queue/bench/history"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/bench/target"
)

const floorSynopsis = `Usage: aditus-queue bench floor [flags]

Measures the server against its floor, in one run: the same load client
drives a bare net/http status server (answering the real server's own
status bytes) and the real status endpoint, in alternating rounds; with
join in --profiles, the same for joins (the floor answers the bytes of a
real join answer, the real side draws a durable number each time); then it
holds --sockets WebSockets open on a bare gorilla/websocket broadcast and
on the real room at once, reads each server's memory per socket, and times
rate changes alternately on each. It prints real/floor ratios (the median
over the rounds) and records the comparison in the history for
'aditus-queue bench report'. The floor runs in a child process of its own,
as the real server does; the real side uses a test room of its own,
deleted afterwards.
`

// Defaults of the floor comparison: a throughput ceiling over a closed
// loop, in a few short rounds so that a noisy machine shows as spread
// between rounds rather than as a skewed ratio.
const (
	defaultFloorConnections = 16
	defaultFloorRounds      = 3
	defaultFloorDuration    = 5 * time.Second
)

// childEnv is added to the floor child's environment (tests set it so the
// test binary acts as the child).
var childEnv []string

type floorFlags struct {
	commonFlags
	profiles     string
	rate         float64
	connections  int
	rounds       int
	sockets      int
	changes      int
	gap          time.Duration
	inProcess    bool
	client       string
	pprofURL     string
	opsURL       string
	historyDir   string
	label        string
	buildVersion string
}

func floorCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// The floor child writes its errors to stderr too, from a goroutine of
	// os/exec unless stderr is a file.
	stderr = &syncWriter{w: stderr}
	var f floorFlags
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	f.define(fs)
	if code, done := parse(fs, floorSynopsis, args, stdout, stderr); done {
		return code
	}
	fail := failure(stderr, "floor")
	base, cfg, err := f.config()
	if err != nil {
		return fail(ExitUsage, err)
	}
	cfg.Stderr = stderr
	if !f.inProcess {
		exe, err := os.Executable()
		if err != nil {
			return fail(ExitFailed, fmt.Errorf("find this program to start the floor process: %w (or use --in-process)", err))
		}
		child, err := floor.StartProcess(ctx, exe, []string{"bench", "floor-server"}, childEnv, stderr)
		if err != nil {
			return fail(ExitFailed, err)
		}
		defer child.Close()
		cfg.Floor = child.URL()
	}
	printer := load.NewPrinter(stdout)
	showProgress(&cfg, printer, stdout)
	res, err := floor.Compare(ctx, f.url, cfg)
	printer.Done()
	if err != nil {
		return fail(ExitFailed, err)
	}
	if err := f.report(stdout, res, base, cfg.Floor); err != nil {
		return fail(ExitFailed, err)
	}
	return ExitOK
}

// define registers the floor command's flags, one a row.
func (f *floorFlags) define(fs *flag.FlagSet) {
	f.register(fs, defaultFloorDuration)
	fs.StringVar(&f.profiles, "profiles", "status,ws", "what to compare: status, join, ws, comma-separated (join draws a durable number per request on the real side; the floor answers the same bytes)")
	fs.Float64Var(&f.rate, "rate", 0, "status: open loop at this many requests per second instead of the closed loop")
	fs.IntVar(&f.connections, "connections", 0, fmt.Sprintf("status: closed-loop connections (default %d unless --rate is set); with --rate, the open loop runs over this many connections, opened first", defaultFloorConnections))
	fs.IntVar(&f.rounds, "rounds", defaultFloorRounds, "status: rounds of --duration on each side, alternately; the ratios are the median over them")
	fs.IntVar(&f.sockets, "sockets", load.DefaultSockets, "ws: WebSockets to hold open on each side (both sides at once)")
	fs.IntVar(&f.changes, "changes", load.DefaultChanges, "ws: rate changes to time on each side, alternately")
	fs.DurationVar(&f.gap, "gap", load.DefaultGap, "ws: pause before each change, so each finds the room quiet")
	fs.StringVar(&f.client, "client", "bench", "status and join: bench (this program's load client), or wrk to also run wrk with the same connections after it on each side in every round, as a cross-check")
	fs.BoolVar(&f.inProcess, "in-process", false, "run the floor inside this process instead of a child process (it then shares the load client's CPU and heap)")
	fs.StringVar(&f.pprofURL, "pprof-url", "", "ws: the server's --ops-addr as a URL (http://127.0.0.1:9090; profiles are served there on loopback), to force a GC on both sides before each memory reading")
	fs.StringVar(&f.opsURL, "ops-url", defaultOpsURL, "ws: the server's --ops-addr as a URL, where its /metrics are read for the memory per socket")
	fs.StringVar(&f.historyDir, "history", history.DefaultDir, "directory of result files; empty to record nothing")
	fs.StringVar(&f.label, "label", "", "what else distinguishes the run, recorded with it")
	fs.StringVar(&f.buildVersion, "build-version", Version, "version string recorded with the result")
}

// config checks every flag before any traffic and returns the checked base
// URL and the comparison's configuration.
func (f *floorFlags) config() (*url.URL, floor.Config, error) {
	base, token, err := f.check()
	if err != nil {
		return nil, floor.Config{}, err
	}
	if f.rate == 0 && f.connections == 0 {
		f.connections = defaultFloorConnections
	}
	cfg := floor.Config{AdminToken: token, AllowHosts: f.allowHosts, RoomRate: f.roomRate, Timeout: f.timeout,
		Rounds: f.rounds, PprofURL: f.pprofURL, OpsURL: f.opsURL}
	if f.rounds < 1 || f.rounds > 100 {
		return nil, cfg, fmt.Errorf("--rounds %d: want 1 to 100", f.rounds)
	}
	switch f.client {
	case "bench":
	case "wrk":
		if f.rate > 0 {
			return nil, cfg, fmt.Errorf("--client wrk: wrk runs a closed loop; drop --rate")
		}
		w, err := floor.FindWrk()
		if err != nil {
			return nil, cfg, fmt.Errorf("--client wrk: %w", err)
		}
		cfg.Wrk = &w
	default:
		return nil, cfg, fmt.Errorf("--client %q: want bench or wrk", f.client)
	}
	if f.pprofURL != "" {
		if _, err := target.Check(f.pprofURL, f.allowHosts); err != nil {
			return nil, cfg, fmt.Errorf("--pprof-url: %w", err)
		}
	}
	if _, err := target.Check(f.opsURL, f.allowHosts); err != nil {
		return nil, cfg, fmt.Errorf("--ops-url: %w", err)
	}
	for _, p := range strings.Split(f.profiles, ",") {
		if err := f.addProfile(&cfg, strings.TrimSpace(p)); err != nil {
			return nil, cfg, err
		}
	}
	return base, cfg, nil
}

// addProfile checks one profile of --profiles and sets its load in cfg.
func (f *floorFlags) addProfile(cfg *floor.Config, p string) error {
	switch p {
	case "status", "join":
		lc := load.Config{
			Profile: load.Profile(p), Rate: f.rate, Connections: f.connections, Duration: f.duration,
			MaxRequests: f.maxRequests, MaxInFlight: f.maxInFlight,
		}
		if err := lc.Validate(); err != nil {
			return err
		}
		if lc.Profile == load.ProfileJoin {
			cfg.Join = lc
		} else {
			cfg.Status = lc
		}
	case "ws":
		cfg.Push = load.PushConfig{Sockets: f.sockets, Changes: f.changes, BaseRate: f.roomRate, Duration: load.MaxDuration, Wait: f.timeout, Gap: f.gap}
		if err := cfg.Push.Validate(); err != nil {
			return err
		}
		// Both sides' sockets are open at once in this process.
		return load.CheckFileLimit(2 * f.sockets)
	default:
		return fmt.Errorf("--profiles: unknown profile %q; want status, join and/or ws", p)
	}
	return nil
}

// showProgress has the comparison print each side's start, seconds and
// rounds as they come.
func showProgress(cfg *floor.Config, printer *load.Printer, stdout io.Writer) {
	cfg.OnStart = func(side floor.Side, p load.Profile) {
		printer.Done()
		fmt.Fprintf(stdout, "%s on the %s:\n", p, side)
	}
	cfg.OnSecond = func(_ floor.Side, s load.Second) { printer.Second(s) }
	cfg.OnRound = func(side floor.Side, r load.Round) {
		printer.Done()
		fmt.Fprintf(stdout, "%-5s ", side)
		printer.Round(r)
	}
}

// report prints each compared profile's summaries and ratios and records
// it in the history (unless --history is empty).
func (f *floorFlags) report(stdout io.Writer, res floor.Result, base, floorURL *url.URL) error {
	var dir history.Dir
	if f.historyDir != "" {
		dir = history.Dir(f.historyDir)
	}
	for _, p := range res.Pairs {
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, "floor: ")
		load.Summary(stdout, p.Floor)
		fmt.Fprint(stdout, "real:  ")
		load.Summary(stdout, p.Real)
		printRatio(stdout, p)
		if dir != "" {
			path, err := dir.Save(f.record(p, base, floorURL))
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "result saved to %s\n", path)
		}
	}
	return nil
}

func printRatio(w io.Writer, p floor.Pair) {
	if p.Profile == load.ProfileWS {
		fmt.Fprintf(w, "ratio real/floor, ws: p50 %.2f×, p99 %.2f×, time until every socket %.2f× (median change: real %s, floor %s)\n",
			p.LatencyRatio(0.5), p.LatencyRatio(0.99), p.TimeToAllRatio(),
			load.FormatDuration(p.Real.MedianTimeToAll()), load.FormatDuration(p.Floor.MedianTimeToAll()))
		if r := p.MemoryRatio(); r > 0 {
			fmt.Fprintf(w, "ratio real/floor, ws memory per socket: %.2f× (real %s, floor %s)\n",
				r, load.FormatBytes(p.Real.Memory.PerSocket()), load.FormatBytes(p.Floor.Memory.PerSocket()))
		}
		return
	}
	fmt.Fprintf(w, "ratio real/floor, %s: throughput %.2f× (real %.1f/s, floor %.1f/s), p50 %.2f×, p99 %.2f× (median of %d rounds)\n",
		p.Profile, p.ThroughputRatio(), p.Real.Achieved(), p.Floor.Achieved(), p.LatencyRatio(0.5), p.LatencyRatio(0.99), max(len(p.Rounds), 1))
	for i, r := range p.Rounds {
		fmt.Fprintf(w, "  round %d: real %.1f/s, floor %.1f/s, throughput %.2f×, p99 %s vs %s\n", i+1, r.Real.Achieved(), r.Floor.Achieved(),
			floor.Ratio(r.Real.Achieved(), r.Floor.Achieved()), load.FormatDuration(r.Real.Latency.Quantile(0.99)), load.FormatDuration(r.Floor.Latency.Quantile(0.99)))
		if r.WrkFloor != nil && r.WrkReal != nil {
			fmt.Fprintf(w, "  round %d, wrk: real %.1f/s, floor %.1f/s, throughput %.2f×, p99 %s vs %s, errors %d vs %d\n", i+1, r.WrkReal.Rate, r.WrkFloor.Rate,
				floor.Ratio(r.WrkReal.Rate, r.WrkFloor.Rate), load.FormatDuration(r.WrkReal.P99), load.FormatDuration(r.WrkFloor.P99), r.WrkReal.Errors, r.WrkFloor.Errors)
		}
	}
	if p.HasWrk() {
		fmt.Fprintf(w, "ratio real/floor, %s, wrk: throughput %.2f×, p99 %.2f×\n", p.Profile, p.WrkThroughputRatio(), p.WrkP99Ratio())
		fmt.Fprintf(w, "load client / wrk, %s: floor %.2f×, real %.2f× (median of the rounds' rates)\n", p.Profile, p.ClientRatio(floor.SideFloor), p.ClientRatio(floor.SideReal))
	}
}

// record turns one compared profile into its history record: the real
// server's figures, the floor's nested, and the ratios.
func (f *floorFlags) record(p floor.Pair, base, floorURL *url.URL) history.Record {
	rec := newRecord(p.Real, base, f.buildVersion, f.reproduce(p.Profile))
	floorTarget := "in-process"
	if floorURL != nil {
		floorTarget = floorURL.String()
	}
	fr := newRecord(p.Floor, &url.URL{Scheme: "floor", Opaque: floorTarget}, f.buildVersion, nil)
	fr.Machine = ""
	rec.Kind, rec.Command, rec.Floor, rec.Label = "floor", "floor", &fr, f.label
	rec.Rounds = max(len(p.Rounds), 1)
	rec.P50Ratio, rec.P99Ratio = p.LatencyRatio(0.5), p.LatencyRatio(0.99)
	if p.Profile == load.ProfileWS {
		rec.TimeToAllRatio, rec.MemoryRatio = p.TimeToAllRatio(), p.MemoryRatio()
	} else {
		rec.ThroughputRatio = p.ThroughputRatio()
	}
	return rec
}

// reproduce returns the floor arguments that repeat one profile's
// comparison (never the token).
func (f *floorFlags) reproduce(p load.Profile) []string {
	args := []string{"--profiles", string(p), "--url", f.url}
	for _, h := range f.allowHosts {
		args = append(args, "--allow-host", h)
	}
	if p == load.ProfileWS {
		args = append(args, "--sockets", strconv.Itoa(f.sockets), "--changes", strconv.Itoa(f.changes))
		if f.gap != load.DefaultGap {
			args = append(args, "--gap", f.gap.String())
		}
		if f.pprofURL != "" {
			args = append(args, "--pprof-url", f.pprofURL)
		}
		if f.opsURL != defaultOpsURL {
			args = append(args, "--ops-url", f.opsURL)
		}
	} else {
		if f.rate > 0 {
			args = append(args, "--rate", strconv.FormatFloat(f.rate, 'g', -1, 64))
		}
		if f.connections > 0 {
			args = append(args, "--connections", strconv.Itoa(f.connections))
		}
		args = append(args, "--duration", f.duration.String(), "--rounds", strconv.Itoa(f.rounds))
	}
	if f.roomRate != defaultRoomRate {
		args = append(args, "--room-rate", strconv.Itoa(f.roomRate))
	}
	if f.inProcess {
		args = append(args, "--in-process")
	}
	if f.client != "bench" && p != load.ProfileWS {
		args = append(args, "--client", f.client)
	}
	if f.label != "" {
		args = append(args, "--label", strconv.Quote(f.label))
	}
	return args
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

const floorServerSynopsis = `Usage: aditus-queue bench floor-server [flags]

Serves the floor of 'aditus-queue bench floor' on a loopback address and
prints "floor listening on <url>"; it ends when its standard input ends.
'bench floor' starts it as its child; there is no need to run it by hand.
`

func floorServerCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("floor-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	lifetime := fs.Duration("lifetime", 2*load.MaxDuration, "end after this long even if standard input stays open")
	if code, done := parse(fs, floorServerSynopsis, args, stdout, stderr); done {
		return code
	}
	if err := floor.ServeChild(ctx, *addr, os.Stdin, stdout, *lifetime); err != nil {
		fmt.Fprintf(stderr, "aditus-queue bench floor-server: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}
