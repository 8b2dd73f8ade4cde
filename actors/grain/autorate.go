package grain

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/health"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// The self-regulating rate in the grain: the poller schedules the health
// checks on the grain's tick, runs each fetch on its own goroutine (never in
// Receive) and hands the answer back as a message; the controller's decision
// is appended to the log before it takes effect.

const (
	// maxHealthTimeout bounds one health check whatever the interval.
	maxHealthTimeout = 10 * time.Second
	// healthTestTimeout bounds the operator's test call, below the grain
	// call's own timeout.
	healthTestTimeout = 5 * time.Second
)

// poller is the health-check schedule of one activation. It lives in the
// grain and is touched only from Receive.
type poller struct {
	due      time.Time
	inflight bool
	// seq tells the answer of the current check from a late one.
	seq    uint64
	cancel context.CancelFunc
}

// healthDone carries a finished health check back into the grain.
type healthDone struct {
	seq uint64
	url string
	obs room.Observation
	// test is set for an operator's test call.
	test *healthTest
}

type healthTest struct {
	sender *actor.PID
	actor  string
}

// interval is the time between two checks: the room's, unless the node
// was started with a (test-only) override.
func (g *roomGrain) healthInterval() time.Duration {
	if g.deps.HealthInterval > 0 {
		return g.deps.HealthInterval
	}
	s := g.st.Config.AutoRate.IntervalSeconds
	if s <= 0 {
		s = room.DefaultIntervalSeconds
	}
	return time.Duration(s) * time.Second
}

// pollHealth starts the next health check when one is due. Only a ready,
// unsuperseded activation of a live, running room (not paused, not before
// its opening) with the controller on polls.
func (g *roomGrain) pollHealth(now time.Time) {
	p := &g.poll
	if g.deps.Health == nil || !g.ready || g.stopped || !g.st.Live() || !g.st.Config.AutoRate.Enabled || p.inflight {
		return
	}
	if !g.st.Config.Active || g.st.Armed != nil {
		// Nobody is admitted while paused or before the opening: an idle
		// shop would look healthy and the rate would climb for nothing.
		return
	}
	interval := g.healthInterval()
	if p.due.IsZero() {
		// A new activation keeps the rhythm of the logged checks: after a
		// fail-over or restart the next check is one interval after the
		// last adjustment, not at once.
		if l := g.st.RateLog(1); len(l) > 0 {
			p.due = l[0].At.Add(interval)
		}
	}
	if now.Before(p.due) {
		return
	}
	p.due = now.Add(interval)
	timeout := min(interval*4/5, maxHealthTimeout)
	p.seq++
	p.inflight = true
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	p.cancel = cancel
	g.fetchHealth(ctx, cancel, &healthDone{seq: p.seq, url: g.st.Config.AutoRate.HealthURL})
}

// fetchHealth runs one fetch on its own goroutine and sends the result to
// the grain.
func (g *roomGrain) fetchHealth(ctx context.Context, cancel context.CancelFunc, done *healthDone) {
	f, self, root := g.deps.Health, g.self, g.sys.Root
	go func() {
		defer cancel()
		a, err := f.Fetch(ctx, done.url)
		done.obs = observation(a, err)
		root.Send(self, done)
	}()
}

// observation turns a fetch into what the controller reads. Errors are
// told in a short sentence that names no internal detail.
func observation(a health.Answer, err error) room.Observation {
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, health.ErrRefused):
			return room.Observation{Err: err.Error()}
		case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			return room.Observation{Err: "no answer in time"}
		default:
			return room.Observation{Err: "the health URL could not be reached"}
		}
	}
	return room.Observation{Status: a.Status, ResponseMs: float64(a.Elapsed.Microseconds()) / 1000,
		Metrics: health.Flatten(a.Body)}
}

// onHealthDone acts on a finished check: the controller decides against
// the state as it is when the write starts, and only if the check is the
// current one for the URL still configured.
func (g *roomGrain) onHealthDone(m *healthDone) {
	if m.test != nil {
		g.answerHealthTest(m)
		return
	}
	if m.seq != g.poll.seq {
		return
	}
	g.poll.inflight, g.poll.cancel = false, nil
	if g.stopped || !g.ready || !g.st.Config.AutoRate.Enabled || g.st.Config.AutoRate.HealthURL != m.url {
		return
	}
	obs := m.obs
	// Queued even when it will write nothing: the write's read-back also
	// tells a superseded activation to stop, so two members never poll one
	// room for longer than one interval.
	g.writes.add(&task{kind: "auto-rate", decide: func(now int64) ([]room.Event, error) {
		if g.st.Config.AutoRate.HealthURL != m.url {
			return nil, nil
		}
		return g.st.DecideRegulate(obs, now), nil
	}, done: func(err error) {
		if err != nil {
			g.log.Warn("rate adjustment not written", "error", err)
		}
	}})
}

// startHealthTest runs the operator's test call of the configured URL.
func (g *roomGrain) startHealthTest(c *opCall, r *protocol.AdminRequest) {
	url := g.st.Config.AutoRate.HealthURL
	if !g.st.Live() {
		c.respond(errResponse(room.ErrNotFound))
		return
	}
	if url == "" {
		c.respond(errResponse(&room.FieldError{Field: "autoRate.healthUrl", Message: "is not set: configure the health URL first"}))
		return
	}
	if g.deps.Health == nil {
		c.respond(errResponse(&protocol.Error{Code: protocol.CodeUnavailable, Message: "Health checks are not available on this node."}))
		return
	}
	fctx, cancel := context.WithTimeout(context.Background(), healthTestTimeout)
	g.fetchHealth(fctx, cancel, &healthDone{url: url, test: &healthTest{sender: c.ctx.Sender(), actor: r.Actor}})
}

// answerHealthTest answers a test call; a passing test is recorded first,
// so that the URL may be enabled.
func (g *roomGrain) answerHealthTest(m *healthDone) {
	reply := func(r *wire.Response) {
		if m.test.sender != nil {
			g.sys.Root.Send(m.test.sender, r)
		}
	}
	cfg := g.st.Config.AutoRate
	obs := m.obs
	res := protocol.HealthTestResult{URL: m.url, Status: obs.Status, ResponseMs: obs.ResponseMs, Metrics: obs.Metrics,
		Rules: cfg.Evaluate(obs)}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	ok, why := cfg.Usable(obs)
	res.OK, res.Error = ok, why
	if !ok || g.stopped {
		reply(okResponse(res))
		return
	}
	t := &task{kind: "health-test", decide: func(now int64) ([]room.Event, error) {
		return g.st.DecideHealthTested(m.url, now, m.test.actor)
	}, done: func(err error) {
		if err != nil {
			reply(errResponse(err))
			return
		}
		reply(okResponse(res))
	}}
	if err := g.writes.submit(t); err != nil {
		reply(errResponse(err))
	}
}

// rateLog answers the adjustments, newest first.
func (g *roomGrain) rateLog() []room.RateChange {
	l := g.st.RateLog(room.MaxRateLog)
	for i, j := 0, len(l)-1; i < j; i, j = i+1, j-1 {
		l[i], l[j] = l[j], l[i]
	}
	return l
}

// stopPolling cancels a check in flight (shutdown, superseded).
func (p *poller) stop() {
	if p.cancel != nil {
		p.cancel()
		p.cancel = nil
	}
	p.inflight = false
	p.seq++
}
