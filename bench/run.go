package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/history"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/bench/target"
)

const runSynopsis = `Usage: aditus-queue bench run --profile join|status|mix|ws [flags]

Creates a test room on the server under test, drives it with one profile,
deletes the room, prints live figures and a summary, and records the result
in the history directory.

  join    POST /queue/<slug>/join, a new visitor each
  status  GET /queue/<slug>/status?ticket=T over tickets drawn up front
  mix     the visitor path: joins and status polls in the --mix proportion
  ws      --sockets WebSockets on /queue/<slug>/ws; --changes rate changes
          through the admin API, timed until the frame reaches every socket

--rate N sends N requests per second on a fixed schedule whatever the
answers (open loop; latency counts from each request's due time);
--connections N keeps N requests going back to back (closed loop). Without
either, the run is an open loop at 50 requests per second.

With --compare, the run is checked against the previous runs of the same
profile and load in the history; a clearly worse run exits with code 3 and
a line saying why.
`

type runFlags struct {
	commonFlags
	profile        string
	rate           float64
	connections    int
	sockets        int
	changes        int
	mix            string
	historyDir     string
	compare        bool
	compareLast    int
	p99Factor      float64
	rateFactor     float64
	errorRateDelta float64
	buildVersion   string
	label          string
	pprofURL       string
	opsURL         string
	gap            time.Duration
}

// defaultRate is the open loop's rate when neither --rate nor --connections
// is given.
const defaultRate = 50

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.define(fs)
	if code, done := parse(fs, runSynopsis, args, stdout, stderr); done {
		return code
	}
	fail := failure(stderr, "run")

	profile, base, token, err := f.check()
	if err != nil {
		return fail(ExitUsage, err)
	}
	conns := max(f.connections, f.sockets, min(f.maxInFlight, 1024))
	client := load.NewClient(conns, f.timeout)
	defer client.CloseIdleConnections()
	admin := target.NewAdmin(base, token, client)

	var res load.Result
	err = withRoom(ctx, admin, f.roomRate, stderr, func(room *target.Room) error {
		res, err = f.drive(ctx, client, base, room, profile, stdout, stderr)
		return err
	})
	if res.Latency != nil {
		load.Summary(stdout, res)
	}
	if err != nil {
		return fail(ExitFailed, err)
	}

	rec := newRecord(res, base, f.buildVersion, f.reproduce(profile))
	rec.Label = f.label
	if f.historyDir == "" {
		return ExitOK
	}
	dir := history.Dir(f.historyDir)
	path, err := dir.Save(rec)
	if err != nil {
		return fail(ExitFailed, err)
	}
	fmt.Fprintf(stdout, "result saved to %s\n", path)
	if !f.compare {
		return ExitOK
	}
	return f.compareWith(dir, rec, stdout, stderr)
}

// define registers the run command's flags, one a row.
func (f *runFlags) define(fs *flag.FlagSet) {
	f.register(fs, load.DefaultDuration)
	fs.StringVar(&f.profile, "profile", "", "what to send: join, status, mix or ws (required)")
	fs.Float64Var(&f.rate, "rate", 0, fmt.Sprintf("open loop: requests per second (default %d when --connections is not set)", defaultRate))
	fs.IntVar(&f.connections, "connections", 0, "closed loop: connections, each sending as soon as the previous answer came; with --rate: the open loop runs over this many connections, opened first (as wrk2 does)")
	fs.IntVar(&f.sockets, "sockets", load.DefaultSockets, "ws: WebSockets to open")
	fs.IntVar(&f.changes, "changes", load.DefaultChanges, "ws: rate changes to time")
	fs.DurationVar(&f.gap, "gap", load.DefaultGap, "ws: pause before each change, so each finds the room quiet")
	fs.StringVar(&f.mix, "mix", load.DefaultMix.String(), "mix: joins:status polls, repeated in this order")
	fs.StringVar(&f.historyDir, "history", history.DefaultDir, "directory of result files; empty to record nothing")
	fs.BoolVar(&f.compare, "compare", false, "compare with the previous comparable runs in --history; exit 3 when clearly worse")
	fs.IntVar(&f.compareLast, "compare-last", history.DefaultThresholds.Last, "compare with at most this many of the most recent comparable runs")
	fs.Float64Var(&f.p99Factor, "p99-factor", history.DefaultThresholds.P99Factor, "worse when p99 exceeds this multiple of the previous runs' median p99")
	fs.Float64Var(&f.rateFactor, "rate-factor", history.DefaultThresholds.RateFactor, "worse when the achieved rate is below this share of the previous runs' median")
	fs.Float64Var(&f.errorRateDelta, "error-rate-delta", history.DefaultThresholds.ErrorRateDelta, "worse when the error rate exceeds the previous runs' median by more than this share (0.01 = 1 point)")
	fs.StringVar(&f.buildVersion, "build-version", Version, "version string recorded with the result")
	fs.StringVar(&f.label, "label", "", `what else distinguishes the run, recorded and shown in the results table (e.g. "embedded log", "kafka")`)
	fs.StringVar(&f.pprofURL, "pprof-url", "", "ws: the server's --ops-addr as a URL (http://127.0.0.1:9090; profiles are served there on loopback), to force a GC before each memory reading")
	fs.StringVar(&f.opsURL, "ops-url", defaultOpsURL, "ws: the server's --ops-addr as a URL, where its /metrics are read for the memory per socket")
}

// drive sends the profile's load to the test room and prints its figures
// as they come.
func (f *runFlags) drive(ctx context.Context, client *http.Client, base *url.URL, room *target.Room, profile load.Profile, stdout, stderr io.Writer) (load.Result, error) {
	t := load.NewTarget(client, base, room.Slug)
	defer t.Close()
	fmt.Fprintf(stdout, "load test %s against %s/queue/%s (test room, deleted afterwards)\n", describeLoad(profile, f), base, room.Slug)
	printer := load.NewPrinter(stdout)
	defer printer.Done()
	if profile != load.ProfileWS {
		return load.Run(ctx, t, f.loadConfig(profile, printer.Second))
	}
	tickets, err := t.JoinMany(ctx, f.sockets)
	if err != nil {
		return load.Result{}, fmt.Errorf("draw tickets for the sockets: %w", err)
	}
	mem := load.MetricsMemory{Client: client, MetricsURL: strings.TrimSuffix(f.opsURL, "/") + "/metrics", PprofURL: f.pprofURL}
	var reader load.MemoryReader = mem
	if _, _, err := mem.Memory(ctx, false); err != nil {
		fmt.Fprintf(stderr, "warning: no memory per socket: %v\n", err)
		reader = nil
	}
	return load.Push(ctx, t, tickets, room, load.PushConfig{
		Sockets: f.sockets, Changes: f.changes, BaseRate: f.roomRate,
		Duration: f.duration, Wait: f.timeout, OnRound: printer.Round, Memory: reader, Gap: f.gap,
	})
}

// compareWith checks the saved run against the previous comparable runs in
// dir and returns ExitWorse when it is clearly worse.
func (f *runFlags) compareWith(dir history.Dir, rec history.Record, stdout, stderr io.Writer) int {
	past, err := dir.Load()
	if err != nil {
		fmt.Fprintf(stderr, "aditus-queue bench run: %v\n", err)
		return ExitFailed
	}
	v := history.Compare(rec, past, history.Thresholds{P99Factor: f.p99Factor, RateFactor: f.rateFactor, ErrorRateDelta: f.errorRateDelta, Last: f.compareLast})
	switch {
	case v.Compared == 0:
		fmt.Fprintln(stdout, "compare: no previous comparable run in the history; nothing to compare")
	case v.Worse():
		for _, r := range v.Reasons {
			fmt.Fprintf(stdout, "WORSE: %s\n", r)
		}
		fmt.Fprintf(stderr, "aditus-queue bench run: this run is clearly worse than the previous %d comparable runs\n", v.Compared)
		return ExitWorse
	default:
		fmt.Fprintf(stdout, "compare: not worse than the previous %d comparable runs (median p99 %.3g ms, median rate %.1f/s)\n", v.Compared, v.MedianP99Ms, v.MedianRate)
	}
	return ExitOK
}

// check validates every flag before any traffic.
func (f *runFlags) check() (load.Profile, *url.URL, string, error) {
	if f.profile == "" {
		return "", nil, "", errors.New("--profile is required: join, status, mix or ws")
	}
	profile, err := load.ParseProfile(f.profile)
	if err != nil {
		return "", nil, "", err
	}
	base, token, err := f.commonFlags.check()
	if err != nil {
		return "", nil, "", err
	}
	if f.pprofURL != "" {
		if _, err := target.Check(f.pprofURL, f.allowHosts); err != nil {
			return "", nil, "", fmt.Errorf("--pprof-url: %w", err)
		}
	}
	if _, err := target.Check(f.opsURL, f.allowHosts); err != nil {
		return "", nil, "", fmt.Errorf("--ops-url: %w", err)
	}
	if profile == load.ProfileWS {
		if f.rate != 0 || f.connections != 0 {
			return "", nil, "", errors.New("--rate and --connections do not apply to --profile ws; use --sockets and --changes")
		}
		cfg := load.PushConfig{Sockets: f.sockets, Changes: f.changes, BaseRate: f.roomRate, Duration: f.duration, Wait: f.timeout, Gap: f.gap}
		if err := cfg.Validate(); err != nil {
			return "", nil, "", err
		}
		return profile, base, token, load.CheckFileLimit(f.sockets)
	}
	if f.rate == 0 && f.connections == 0 {
		f.rate = defaultRate
	}
	if _, err := load.ParseMix(f.mix); err != nil {
		return "", nil, "", err
	}
	return profile, base, token, f.loadConfig(profile, nil).Validate()
}

func (f *runFlags) loadConfig(p load.Profile, onSecond func(load.Second)) load.Config {
	mix, _ := load.ParseMix(f.mix) // checked in check
	return load.Config{
		Profile: p, Rate: f.rate, Connections: f.connections, Duration: f.duration,
		MaxRequests: f.maxRequests, MaxInFlight: f.maxInFlight, Mix: mix, OnSecond: onSecond,
	}
}

func describeLoad(p load.Profile, f *runFlags) string {
	switch {
	case p == load.ProfileWS:
		return fmt.Sprintf("ws: %d WebSockets, %d rate changes", f.sockets, f.changes)
	case f.rate > 0 && f.connections > 0:
		return fmt.Sprintf("%s: open loop at %g req/s over %d connections for %v", p, f.rate, f.connections, f.duration)
	case f.rate > 0:
		return fmt.Sprintf("%s: open loop at %g req/s for %v", p, f.rate, f.duration)
	default:
		return fmt.Sprintf("%s: closed loop over %d connections for %v", p, f.connections, f.duration)
	}
}

// reproduce returns the arguments that repeat this run (never the token).
func (f *runFlags) reproduce(p load.Profile) []string {
	args := []string{"--profile", string(p), "--url", f.url}
	for _, h := range f.allowHosts {
		args = append(args, "--allow-host", h)
	}
	switch {
	case p == load.ProfileWS:
		args = append(args, "--sockets", strconv.Itoa(f.sockets), "--changes", strconv.Itoa(f.changes))
		if f.gap != load.DefaultGap {
			args = append(args, "--gap", f.gap.String())
		}
	case f.rate > 0:
		args = append(args, "--rate", strconv.FormatFloat(f.rate, 'g', -1, 64))
		if f.connections > 0 {
			args = append(args, "--connections", strconv.Itoa(f.connections))
		}
	default:
		args = append(args, "--connections", strconv.Itoa(f.connections))
	}
	args = append(args, "--duration", f.duration.String())
	if p == load.ProfileMix {
		args = append(args, "--mix", f.mix)
	}
	if f.roomRate != defaultRoomRate {
		args = append(args, "--room-rate", strconv.Itoa(f.roomRate))
	}
	if f.maxRequests != load.DefaultMaxRequests {
		args = append(args, "--max-requests", strconv.Itoa(f.maxRequests))
	}
	if f.maxInFlight != load.DefaultMaxInFlight && f.rate > 0 {
		args = append(args, "--max-in-flight", strconv.Itoa(f.maxInFlight))
	}
	if f.timeout != load.DefaultTimeout {
		args = append(args, "--timeout", f.timeout.String())
	}
	if f.label != "" {
		args = append(args, "--label", strconv.Quote(f.label))
	}
	if p == load.ProfileWS && f.pprofURL != "" {
		args = append(args, "--pprof-url", f.pprofURL)
	}
	if p == load.ProfileWS && f.opsURL != defaultOpsURL {
		args = append(args, "--ops-url", f.opsURL)
	}
	return args
}

// newRecord turns a run's result into its history record.
func newRecord(r load.Result, base *url.URL, version string, args []string) history.Record {
	ms := func(q float64) float64 { return float64(r.Latency.Quantile(q)) / 1e6 }
	rec := history.Record{
		ID: history.NewID(), Timestamp: r.Started.UTC(), Version: version, Target: base.String(),
		Profile: string(r.Profile), Mode: string(r.Mode), Rate: r.Rate, Connections: r.Connections,
		DurationSeconds: r.Duration.Seconds(), ElapsedSeconds: r.Elapsed.Seconds(),
		Requests: r.Requests, OK: r.OK, ErrorRate: r.ErrorRate(),
		P50Ms: ms(0.50), P95Ms: ms(0.95), P99Ms: ms(0.99), MaxMs: float64(r.Latency.Max()) / 1e6,
		TimeToAllMs: float64(r.TimeToAll) / 1e6, MedianTimeToAllMs: float64(r.MedianTimeToAll()) / 1e6,
		Machine: machine(), Args: args,
	}
	if m := r.Memory; m != nil {
		rec.BytesPerSocket, rec.RSSPerSocket, rec.MemoryGC = m.PerSocket(), m.RSSPerSocket(), m.GC
	}
	if r.Mode != load.ModePush {
		rec.AchievedRate = r.Achieved()
	}
	if r.Profile == load.ProfileMix {
		rec.Mix = r.Mix.String()
	}
	if len(r.Errors) > 0 {
		rec.Errors = make(map[string]int64, len(r.Errors))
		for c, n := range r.Errors {
			rec.Errors[string(c)] = n
		}
	}
	return rec
}
