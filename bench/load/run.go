package load

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/histogram"
)

// Mode is how the load is offered.
type Mode string

// The modes.
const (
	// ModeOpen: requests at a fixed rate, regardless of answers.
	ModeOpen Mode = "open"
	// ModeClosed: N connections, each as fast as the server answers.
	ModeClosed Mode = "closed"
	// ModePush: WebSocket push latency.
	ModePush Mode = "push"
)

// Limits that no configuration may exceed, so a run always stops by itself.
const (
	MaxDuration    = 10 * time.Minute
	MaxRequestsCap = 10_000_000
	MaxRate        = 100_000
	MaxConnections = 10_000
	MaxInFlightCap = 100_000
)

// Defaults of a run.
const (
	DefaultDuration    = 30 * time.Second
	DefaultMaxRequests = 1_000_000
	DefaultMaxInFlight = 1000
	DefaultTimeout     = 10 * time.Second
	// DefaultTickets is how many joins the status profile makes up front.
	DefaultTickets = 16
)

// Config is one HTTP run (join, status or mix).
type Config struct {
	Profile Profile
	// Rate, in requests per second, selects the open loop.
	Rate float64
	// Connections alone selects the closed loop; with Rate, the open loop
	// runs over that many connections, opened before it starts
	// (PacedLoop).
	Connections int
	// Duration bounds the run; at most MaxDuration.
	Duration time.Duration
	// MaxRequests caps the requests sent in all; at most MaxRequestsCap.
	MaxRequests int
	// MaxInFlight bounds the open loop's open requests.
	MaxInFlight int
	// Mix is the mix profile's proportion.
	Mix Mix
	// Tickets are used by status polls; when empty, Run draws
	// DefaultTickets by joining first.
	Tickets []string
	// Clock defaults to SystemClock.
	Clock Clock
	// OnSecond, when set, receives the figures of every second from one
	// goroutine while the run lasts.
	OnSecond func(Second)
}

// Mode reports how the load is offered.
func (c Config) Mode() Mode {
	if c.Rate > 0 {
		return ModeOpen
	}
	return ModeClosed
}

// Validate checks a configuration against the limits.
func (c Config) Validate() error {
	switch {
	case c.Profile == ProfileWS:
		return errors.New("profile ws is run by Push, not Run")
	case c.Rate <= 0 && c.Connections <= 0:
		return errors.New("set a rate (open loop) or connections (closed loop), or both (open loop over that many connections)")
	case c.Rate < 0 || c.Rate > MaxRate:
		return fmt.Errorf("rate %v: want 0 < rate ≤ %d per second", c.Rate, MaxRate)
	case c.Connections < 0 || c.Connections > MaxConnections:
		return fmt.Errorf("connections %d: want 1 to %d", c.Connections, MaxConnections)
	case c.Duration <= 0 || c.Duration > MaxDuration:
		return fmt.Errorf("duration %v: want more than 0 and at most %v", c.Duration, MaxDuration)
	case c.MaxRequests <= 0 || c.MaxRequests > MaxRequestsCap:
		return fmt.Errorf("max requests %d: want 1 to %d", c.MaxRequests, MaxRequestsCap)
	case c.Mode() == ModeOpen && (c.MaxInFlight <= 0 || c.MaxInFlight > MaxInFlightCap):
		return fmt.Errorf("max in flight %d: want 1 to %d", c.MaxInFlight, MaxInFlightCap)
	case c.Profile == ProfileMix && c.Mix.Joins+c.Mix.Polls == 0:
		return errors.New("mix: want at least one join or poll per cycle")
	}
	_, err := ParseProfile(string(c.Profile))
	return err
}

// Result is the outcome of one run.
type Result struct {
	Profile     Profile
	Mode        Mode
	Rate        float64
	Connections int
	// Duration is the configured bound; Elapsed is from the first send to
	// the last answer.
	Duration time.Duration
	Started  time.Time
	Elapsed  time.Duration
	Counts
	// Latency holds the latencies of successful requests (for ws: of
	// frames received).
	Latency *histogram.Histogram
	// Mix is set for the mix profile.
	Mix Mix
	// Rounds and TimeToAll are set for the ws profile: TimeToAll is the
	// slowest round's time until every socket had the frame.
	Rounds    []Round
	TimeToAll time.Duration
	// Memory is set for a ws run that read the server's memory.
	Memory *SocketMemory
}

// Achieved reports successful answers (ws: frames) per second of Elapsed.
func (r Result) Achieved() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// MedianTimeToAll reports, for ws, the median over the changes of the time
// until every socket had the frame (0 when no change reached them all).
func (r Result) MedianTimeToAll() time.Duration {
	var ds []time.Duration
	for _, rd := range r.Rounds {
		if rd.TimeToAll > 0 {
			ds = append(ds, rd.TimeToAll)
		}
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	if n := len(ds); n%2 == 0 {
		return (ds[n/2-1] + ds[n/2]) / 2
	}
	return ds[len(ds)/2]
}

// ErrorRate reports the share of requests that did not end OK.
func (r Result) ErrorRate() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.ErrorCount()) / float64(r.Requests)
}

// Run drives target with cfg until the duration has passed or the request
// cap is reached, and returns the figures. It returns an error only when
// the run could not start (bad configuration, the up-front joins failed) or
// when ctx ended before it finished; failed requests are counted, not
// returned.
func Run(ctx context.Context, t *Target, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	defer t.abortOn(ctx)()
	clock := cfg.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	tickets := cfg.Tickets
	if len(tickets) == 0 && cfg.Profile != ProfileJoin {
		var err error
		if tickets, err = t.JoinMany(ctx, DefaultTickets); err != nil {
			return Result{}, fmt.Errorf("draw tickets for status polls: %w", err)
		}
	}
	req, err := cfg.Profile.request(t, cfg.Mix, tickets)
	if err != nil {
		return Result{}, err
	}

	paced := cfg.Mode() == ModeOpen && cfg.Connections > 0
	if paced {
		if err := t.Warm(ctx, cfg.Connections); err != nil {
			return Result{}, fmt.Errorf("open %d connections: %w", cfg.Connections, err)
		}
	}

	rec := NewRecorder()
	stopTicker := startTicker(rec, cfg.OnSecond)
	start := clock.Now()
	switch {
	case paced:
		PacedLoop(ctx, clock, NewSchedule(start, cfg.Rate, cfg.Duration, cfg.MaxRequests), cfg.Connections, cfg.MaxInFlight, rec, req)
	case cfg.Mode() == ModeOpen:
		OpenLoop(ctx, clock, NewSchedule(start, cfg.Rate, cfg.Duration, cfg.MaxRequests), cfg.MaxInFlight, rec, req)
	default:
		ClosedLoop(ctx, clock, cfg.Connections, cfg.Duration, cfg.MaxRequests, rec, req)
	}
	elapsed := clock.Now().Sub(start)
	stopTicker()

	counts, lat := rec.Total()
	res := Result{
		Profile: cfg.Profile, Mode: cfg.Mode(), Rate: cfg.Rate, Connections: cfg.Connections,
		Duration: cfg.Duration, Started: start, Elapsed: elapsed, Counts: counts, Latency: lat,
	}
	if cfg.Profile == ProfileMix {
		res.Mix = cfg.Mix
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("run interrupted: %w", err)
	}
	return res, nil
}

// startTicker calls onSecond with each second's figures until the returned
// stop is called; stop waits for the goroutine to end.
func startTicker(rec *Recorder, onSecond func(Second)) (stop func()) {
	if onSecond == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				onSecond(rec.Flip(now.Sub(last)))
				last = now
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
