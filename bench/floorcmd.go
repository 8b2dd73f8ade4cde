package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/floor"
	"github.com/aditus-queue/aditus-queue/bench/load"
)

const floorSynopsis = `Usage: aditus-queue bench floor [flags]

Measures the server against its floor: the same load client drives a bare
net/http status server (answering the real server's own status bytes) and
then the real status endpoint, and a bare WebSocket broadcast and then the
real room's push, and prints real/floor ratios. The real side runs in a test
room of its own, deleted afterwards.
`

// defaultFloorConnections is the closed loop of the status comparison: a
// throughput ceiling, not a visitor rate.
const defaultFloorConnections = 16

func floorCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c commonFlags
	var profiles string
	var rate float64
	var connections, sockets, changes int
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	c.register(fs, 10*time.Second)
	fs.StringVar(&profiles, "profiles", "status,ws", "what to compare: status, ws or both, comma-separated")
	fs.Float64Var(&rate, "rate", 0, "status: open loop at this many requests per second instead of the closed loop")
	fs.IntVar(&connections, "connections", 0, fmt.Sprintf("status: closed-loop connections (default %d unless --rate is set)", defaultFloorConnections))
	fs.IntVar(&sockets, "sockets", load.DefaultSockets, "ws: WebSockets to open on each side")
	fs.IntVar(&changes, "changes", load.DefaultChanges, "ws: changes to time on each side")
	fs.Usage = usageFunc(fs, floorSynopsis)
	if code, done := parse(fs, args, stdout, stderr); done {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "aditus-queue bench floor: %v\n", err)
		return code
	}
	_, token, err := c.check()
	if err != nil {
		return fail(ExitUsage, err)
	}
	if rate == 0 && connections == 0 {
		connections = defaultFloorConnections
	}
	cfg := floor.Config{AdminToken: token, AllowHosts: c.allowHosts, RoomRate: c.roomRate, Timeout: c.timeout}
	for _, p := range strings.Split(profiles, ",") {
		switch strings.TrimSpace(p) {
		case "status":
			cfg.Status = load.Config{
				Profile: load.ProfileStatus, Rate: rate, Connections: connections, Duration: c.duration,
				MaxRequests: c.maxRequests, MaxInFlight: c.maxInFlight,
			}
			if err := cfg.Status.Validate(); err != nil {
				return fail(ExitUsage, err)
			}
		case "ws":
			cfg.Push = load.PushConfig{Sockets: sockets, Changes: changes, BaseRate: c.roomRate, Duration: c.duration, Wait: c.timeout}
			if err := cfg.Push.Validate(); err != nil {
				return fail(ExitUsage, err)
			}
		default:
			return fail(ExitUsage, fmt.Errorf("--profiles: unknown profile %q; want status and/or ws", p))
		}
	}

	printer := load.NewPrinter(stdout)
	cfg.OnStart = func(side floor.Side, p load.Profile) {
		printer.Done()
		fmt.Fprintf(stdout, "%s on the %s:\n", p, side)
	}
	cfg.OnSecond = func(_ floor.Side, s load.Second) { printer.Second(s) }
	cfg.OnRound = func(_ floor.Side, r load.Round) { printer.Round(r) }
	res, err := floor.Compare(ctx, c.url, cfg)
	printer.Done()
	if err != nil {
		return fail(ExitFailed, err)
	}
	for _, p := range res.Pairs {
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, "floor: ")
		load.Summary(stdout, p.Floor)
		fmt.Fprint(stdout, "real:  ")
		load.Summary(stdout, p.Real)
		printRatio(stdout, p)
	}
	return ExitOK
}

func printRatio(w io.Writer, p floor.Pair) {
	if p.Profile == load.ProfileWS {
		fmt.Fprintf(w, "ratio real/floor, ws: p50 %.2f×, p99 %.2f×, time until every socket %.2f×\n",
			p.LatencyRatio(0.5), p.LatencyRatio(0.99), p.TimeToAllRatio())
		return
	}
	fmt.Fprintf(w, "ratio real/floor, %s: throughput %.2f× (real %.1f/s, floor %.1f/s), p50 %.2f×, p99 %.2f×\n",
		p.Profile, p.ThroughputRatio(), p.Real.Achieved(), p.Floor.Achieved(), p.LatencyRatio(0.5), p.LatencyRatio(0.99))
}
