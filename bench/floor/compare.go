package floor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/histogram"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/bench/median"
	"github.com/aditus-queue/aditus-queue/bench/target"
)

// Side names which server a figure was measured on.
type Side string

// The sides of a comparison.
const (
	SideFloor Side = "floor"
	SideReal  Side = "real"
)

// Config is a floor comparison. The same load settings and the same client
// drive both sides.
type Config struct {
	// AdminToken creates and deletes the real server's test room.
	AdminToken string
	// AllowHosts names non-loopback hosts the real URL may have.
	AllowHosts []string
	// RoomRate is the test room's admission rate per minute.
	RoomRate int
	// Timeout bounds each request.
	Timeout time.Duration
	// Floor is the base URL of a floor Server (see Process); nil starts
	// one in this process, where it shares the load client's CPU.
	Floor *url.URL
	// Status is the HTTP load for the status profile (Profile is set by
	// Compare); Status.Duration 0 skips it. It is run Rounds times on each
	// side, alternately.
	Status load.Config
	// Join is the HTTP load for the join profile, run like Status (after
	// it); the floor answers every join with the bytes of one real join
	// answer. Join.Duration 0 skips it.
	Join   load.Config
	Rounds int
	// Push is the ws load (BaseRate and Memory are set by Compare);
	// Push.Sockets 0 skips it. Both sides' sockets are open together and
	// the changes alternate between the sides.
	Push load.PushConfig
	// PprofURL is the real server's pprof endpoint, used to force a GC
	// before each memory reading; without it neither side collects first.
	PprofURL string
	// Wrk, when set, also runs wrk with the same connections on each side
	// after the load client in every status and join round.
	Wrk *Wrk
	// OpsURL is the real server's operations listener (--ops-addr), whose
	// /metrics give its memory.
	OpsURL string
	// Stderr receives warnings (nil: none).
	Stderr io.Writer
	// OnStart, OnSecond and OnRound, when set, are told of progress.
	OnStart  func(side Side, p load.Profile)
	OnSecond func(side Side, s load.Second)
	OnRound  func(side Side, r load.Round)
}

// Round is one status round: the same load on each side, one after the
// other.
type Round struct {
	Floor, Real load.Result
	// WrkFloor and WrkReal are wrk's figures, when it ran too.
	WrkFloor, WrkReal *WrkResult
}

// Pair is one profile measured on both sides.
type Pair struct {
	Profile load.Profile
	// Floor and Real are the figures of all rounds together.
	Floor, Real load.Result
	// Rounds holds each status round; empty for ws.
	Rounds []Round
}

// ThroughputRatio reports the real server's achieved rate as a share of the
// floor's (1 = as fast as the floor): the median of the rounds' ratios.
func (p Pair) ThroughputRatio() float64 {
	return p.median(func(f, r load.Result) float64 { return Ratio(r.Achieved(), f.Achieved()) })
}

// LatencyRatio reports the real server's q-quantile latency as a multiple
// of the floor's: the median of the rounds' ratios.
func (p Pair) LatencyRatio(q float64) float64 {
	return p.median(func(f, r load.Result) float64 {
		return Ratio(float64(r.Latency.Quantile(q)), float64(f.Latency.Quantile(q)))
	})
}

// TimeToAllRatio reports, for ws, the real server's median time until
// every socket had the frame as a multiple of the floor's.
func (p Pair) TimeToAllRatio() float64 {
	return Ratio(float64(p.Real.MedianTimeToAll()), float64(p.Floor.MedianTimeToAll()))
}

// MemoryRatio reports, for ws, the real server's memory per socket as a
// multiple of the floor's (0 when either was not measured).
func (p Pair) MemoryRatio() float64 {
	if p.Real.Memory == nil || p.Floor.Memory == nil {
		return 0
	}
	return Ratio(p.Real.Memory.PerSocket(), p.Floor.Memory.PerSocket())
}

// HasWrk reports whether wrk ran in every round.
func (p Pair) HasWrk() bool {
	for _, r := range p.Rounds {
		if r.WrkFloor == nil || r.WrkReal == nil {
			return false
		}
	}
	return len(p.Rounds) > 0
}

// WrkThroughputRatio is ThroughputRatio as wrk measured it.
func (p Pair) WrkThroughputRatio() float64 {
	return p.medianRounds(func(r Round) float64 { return Ratio(r.WrkReal.Rate, r.WrkFloor.Rate) })
}

// WrkP99Ratio is LatencyRatio(0.99) as wrk measured it.
func (p Pair) WrkP99Ratio() float64 {
	return p.medianRounds(func(r Round) float64 { return Ratio(float64(r.WrkReal.P99), float64(r.WrkFloor.P99)) })
}

// ClientRatio reports the load client's rate on side as a share of wrk's
// on the same side in the same round (the median over the rounds): below 1,
// the load client falls short of a C client.
func (p Pair) ClientRatio(side Side) float64 {
	return p.medianRounds(func(r Round) float64 {
		if side == SideFloor {
			return Ratio(r.Floor.Achieved(), r.WrkFloor.Rate)
		}
		return Ratio(r.Real.Achieved(), r.WrkReal.Rate)
	})
}

func (p Pair) median(f func(floor, real load.Result) float64) float64 {
	if len(p.Rounds) == 0 {
		return f(p.Floor, p.Real)
	}
	return p.medianRounds(func(r Round) float64 { return f(r.Floor, r.Real) })
}

func (p Pair) medianRounds(f func(Round) float64) float64 {
	return median.Of(p.Rounds, f)
}

// Ratio is a / b, or 0 when b is 0 (nothing to compare with).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Result is a whole comparison, one pair per profile run.
type Result struct {
	Pairs []Pair
}

// Compare creates a test room on the real server at realBaseURL (which
// must pass the loopback guard), runs the status load on the floor and the
// real endpoint in alternating rounds, then the ws comparison, and deletes
// the room. The floor answers status with the exact bytes of one of the
// real server's status answers, so both sides send the same size.
func Compare(ctx context.Context, realBaseURL string, cfg Config) (Result, error) {
	base, err := target.Check(realBaseURL, cfg.AllowHosts)
	if err != nil {
		return Result{}, err
	}
	if cfg.Status.Duration == 0 && cfg.Join.Duration == 0 && cfg.Push.Sockets == 0 {
		return Result{}, errors.New("floor: nothing to compare: no status, join or ws load configured")
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = load.DefaultTimeout
	}
	conns := max(cfg.Status.Connections, cfg.Join.Connections, min(max(cfg.Status.MaxInFlight, cfg.Join.MaxInFlight), 1024), 16)
	client := load.NewClient(conns, timeout)
	defer client.CloseIdleConnections()

	floorURL := cfg.Floor
	if floorURL == nil {
		srv, err := NewServer("127.0.0.1:0")
		if err != nil {
			return Result{}, fmt.Errorf("floor: start the floor server: %w", err)
		}
		defer srv.Close()
		floorURL = srv.URL()
	}
	fl := NewRemote(client, floorURL)

	room, err := target.NewAdmin(base, cfg.AdminToken, client).CreateRoom(ctx, max(cfg.RoomRate, 1))
	if err != nil {
		return Result{}, err
	}
	res, err := comparePairs(ctx, client, base, fl, room, cfg)
	if derr := room.Delete(ctx); derr != nil {
		err = errors.Join(err, derr)
	}
	return res, err
}

// comparePairs measures each kind of load the configuration asks for, on
// room and on the floor, one after the other.
func comparePairs(ctx context.Context, client *http.Client, base *url.URL, fl *Remote, room *target.Room, cfg Config) (Result, error) {
	var res Result
	queue := load.NewTarget(client, base, room.Slug)
	defer queue.Close()
	if cfg.Status.Duration > 0 {
		p, err := compareStatus(ctx, client, queue, fl, room.Slug, cfg)
		if err != nil {
			return res, err
		}
		res.Pairs = append(res.Pairs, p)
	}
	if cfg.Join.Duration > 0 {
		p, err := compareJoin(ctx, client, queue, fl, room.Slug, cfg)
		if err != nil {
			return res, err
		}
		res.Pairs = append(res.Pairs, p)
	}
	if cfg.Push.Sockets > 0 {
		real := load.MetricsMemory{Client: client, MetricsURL: strings.TrimSuffix(cfg.OpsURL, "/") + "/metrics", PprofURL: cfg.PprofURL}
		p, err := comparePush(ctx, client, queue, fl, room, real, cfg)
		if err != nil {
			return res, err
		}
		res.Pairs = append(res.Pairs, p)
	}
	return res, nil
}

func compareStatus(ctx context.Context, client *http.Client, queue *load.Target, fl *Remote, slug string, cfg Config) (Pair, error) {
	tickets, err := queue.JoinMany(ctx, load.DefaultTickets)
	if err != nil {
		return Pair{}, fmt.Errorf("floor: %w", err)
	}
	body, retryAfter, err := queue.StatusBody(ctx, tickets[0])
	if err != nil {
		return Pair{}, fmt.Errorf("floor: sample status answer: %w", err)
	}
	if err := fl.SetStatus(ctx, body, retryAfter); err != nil {
		return Pair{}, err
	}
	lc := cfg.Status
	lc.Profile = load.ProfileStatus
	lc.Tickets = tickets
	return compareRounds(ctx, queue, load.NewTarget(client, fl.URL(), slug), lc, cfg)
}

// compareJoin makes the floor answer joins with the bytes of a real join
// answer, then runs the join load on both sides in alternating rounds. The
// real side draws a durable number for every request; the floor, nothing.
func compareJoin(ctx context.Context, client *http.Client, queue *load.Target, fl *Remote, slug string, cfg Config) (Pair, error) {
	body, err := queue.JoinBody(ctx)
	if err != nil {
		return Pair{}, fmt.Errorf("floor: sample join answer: %w", err)
	}
	if err := fl.SetJoin(ctx, body); err != nil {
		return Pair{}, err
	}
	lc := cfg.Join
	lc.Profile = load.ProfileJoin
	return compareRounds(ctx, queue, load.NewTarget(client, fl.URL(), slug), lc, cfg)
}

// compareRounds runs lc on the floor and the real server, alternately, for
// cfg.Rounds rounds.
func compareRounds(ctx context.Context, queue, floorTarget *load.Target, lc load.Config, cfg Config) (Pair, error) {
	defer floorTarget.Close()
	p := Pair{Profile: lc.Profile}
	for i := range max(cfg.Rounds, 1) {
		// Alternate which side goes first (floor, real, real, floor, …), so
		// a drift of the machine's load favours neither.
		sides := []Side{SideFloor, SideReal}
		if i%2 == 1 {
			sides = []Side{SideReal, SideFloor}
		}
		var rd Round
		for _, side := range sides {
			t := queue
			if side == SideFloor {
				t = floorTarget
			}
			if cfg.OnStart != nil {
				cfg.OnStart(side, lc.Profile)
			}
			c := lc
			if cfg.OnSecond != nil {
				c.OnSecond = func(s load.Second) { cfg.OnSecond(side, s) }
			}
			r, err := load.Run(ctx, t, c)
			if err != nil {
				return p, fmt.Errorf("floor: %s on %s: %w", lc.Profile, side, err)
			}
			wr, err := runWrk(ctx, t, lc, cfg.Wrk)
			if err != nil {
				return p, fmt.Errorf("floor: %s on %s: %w", lc.Profile, side, err)
			}
			if side == SideFloor {
				rd.Floor, rd.WrkFloor = r, wr
			} else {
				rd.Real, rd.WrkReal = r, wr
			}
		}
		p.Rounds = append(p.Rounds, rd)
	}
	p.Floor, p.Real = merge(p.Rounds, SideFloor), merge(p.Rounds, SideReal)
	return p, nil
}

// runWrk runs wrk with lc's connections and duration against t, when w is
// set.
func runWrk(ctx context.Context, t *load.Target, lc load.Config, w *Wrk) (*WrkResult, error) {
	if w == nil {
		return nil, nil
	}
	if lc.Connections <= 0 || lc.Rate > 0 {
		return nil, errors.New("wrk runs a closed loop only: set connections and no rate")
	}
	var ticket string
	if len(lc.Tickets) > 0 {
		ticket = lc.Tickets[0]
	}
	method, u := t.URL(lc.Profile, ticket)
	r, err := w.Run(ctx, method, u, lc.Connections, lc.Duration)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// merge adds up the rounds of one side.
func merge(rounds []Round, side Side) load.Result {
	var out load.Result
	for i, rd := range rounds {
		r := rd.Real
		if side == SideFloor {
			r = rd.Floor
		}
		if i == 0 {
			out = r
			out.Latency = histogram.New()
			out.Errors = nil
			out.Requests, out.OK, out.Elapsed = 0, 0, 0
		}
		out.Requests += r.Requests
		out.OK += r.OK
		out.Elapsed += r.Elapsed
		out.Duration = r.Duration * time.Duration(len(rounds))
		out.Latency.Merge(r.Latency)
		for c, n := range r.Errors {
			if out.Errors == nil {
				out.Errors = map[load.Class]int64{}
			}
			out.Errors[c] += n
		}
	}
	return out
}

// comparePush opens the sockets on both sides (reading each server's
// memory around it), then makes the changes alternately on the floor and
// on the real room, so both sides see the same machine load.
func comparePush(ctx context.Context, client *http.Client, queue *load.Target, fl *Remote, room *target.Room, realMem load.MetricsMemory, cfg Config) (Pair, error) {
	tickets, err := queue.JoinMany(ctx, cfg.Push.Sockets)
	if err != nil {
		return Pair{}, fmt.Errorf("floor: %w", err)
	}
	pc := cfg.Push
	pc.BaseRate = max(cfg.RoomRate, 1)
	pc.OnRound = nil
	floorMem, realMemReader := pushMemory(ctx, fl, realMem, cfg)

	type side struct {
		name    Side
		target  *load.Target
		changer load.RateChanger
		memory  load.MemoryReader
		sockets *load.Sockets
	}
	sides := []*side{
		{name: SideFloor, target: load.NewTarget(client, fl.URL(), room.Slug), changer: fl, memory: floorMem},
		{name: SideReal, target: queue, changer: room, memory: realMemReader},
	}
	defer sides[0].target.Close()
	defer func() {
		for _, s := range sides {
			if s.sockets != nil {
				s.sockets.Close()
			}
		}
	}()
	for _, s := range sides {
		if cfg.OnStart != nil {
			cfg.OnStart(s.name, load.ProfileWS)
		}
		c := pc
		c.Memory = s.memory
		s.sockets, err = load.OpenSockets(ctx, s.target, tickets, c)
		if err != nil {
			return Pair{}, fmt.Errorf("floor: ws on %s: %w", s.name, err)
		}
	}
	deadline := time.Now().Add(pc.Duration)
	for i := 1; i <= pc.Changes && time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		for _, s := range sides {
			rd, err := s.sockets.Change(ctx, s.changer, pc.BaseRate+i)
			if err != nil {
				return Pair{}, fmt.Errorf("floor: ws on %s: %w", s.name, err)
			}
			if cfg.OnRound != nil {
				cfg.OnRound(s.name, rd)
			}
		}
	}
	p := Pair{Profile: load.ProfileWS, Floor: sides[0].sockets.Result(), Real: sides[1].sockets.Result()}
	if err := ctx.Err(); err != nil {
		return p, fmt.Errorf("run interrupted: %w", err)
	}
	return p, nil
}

// pushMemory returns the memory readers of the floor and the real side: both
// when the real server's memory can be read, neither (with a warning)
// otherwise, so the two readings are always alike.
func pushMemory(ctx context.Context, fl *Remote, realMem load.MetricsMemory, cfg Config) (floorMem, realReader load.MemoryReader) {
	if _, _, err := realMem.Memory(ctx, false); err != nil {
		fmt.Fprintf(cfg.Stderr, "warning: no memory per socket: %v\n", err)
		return nil, nil
	}
	// Collect garbage on the floor only when the real server can be made
	// to collect as well, so both readings are alike.
	fl.gc = cfg.PprofURL != ""
	return fl, realMem
}

var (
	_ load.RateChanger  = (*target.Room)(nil)
	_ load.RateChanger  = (*Remote)(nil)
	_ load.MemoryReader = (*Remote)(nil)
)
