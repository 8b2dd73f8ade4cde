package grain

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// LoadTestDeps are what the load-test grain needs beyond Deps.
type LoadTestDeps struct {
	// BaseURL is this node's public URL (scheme://host[:port]); the runner
	// sends its requests there, so the whole path a visitor takes is
	// measured. Empty means this node cannot run load tests: a start
	// fails with a message.
	BaseURL string
	// Now is the scheduler's clock (default Deps.Now); tests make it run
	// fast so an every-minute schedule fires within a second.
	Now func() time.Time
	// Tick is how often the schedules are checked (default 1 s).
	Tick time.Duration
	// FlushSeconds is how many per-second figures are gathered into one
	// log record (default 5). The last ones are written when the run ends.
	FlushSeconds int
}

// loadTestGrain is the single grain that owns the load tests of the
// cluster: the run list, the schedules, and the run in progress, which it
// drives with bench/load on its own node.
//
// One grain, rather than the node that owns a schedule or the room under
// test, because the rules are cluster-wide: one run at a time for the
// whole cluster (a second start is refused while one runs, whichever node
// receives it), one scheduler that fires each schedule once, one history.
// A singleton grain gives that by placement alone, with the fencing every
// grain already has against two activations; its events (starts,
// per-second figures in batches, ends, schedules) are in the log like a
// room's, so a restart or fail-over recovers the history and the
// schedules. A run has no owner after its node dies: the next activation
// finds it unfinished and marks it interrupted, keeping what was recorded.
type loadTestGrain struct {
	deps  *Deps
	log   *slog.Logger
	sys   *actor.ActorSystem
	self  *actor.PID
	st    *loadtest.State
	j     journal
	ready bool
	dead  bool
	since int
	sched *loadtest.Scheduler
	cur   *activeRun
	// once answers a retried start or schedule change with its first
	// answer (room_once.go); its writes are synchronous, so a retry comes
	// after the first answer.
	once onceDesk

	stopTick chan struct{}
}

// activeRun is the run this activation drives.
type activeRun struct {
	id     string
	cancel context.CancelFunc
	// done is closed when the runner's goroutine has returned.
	done chan struct{}
	// pending are per-second figures not yet in the log.
	pending []loadtest.Second
	// stopping is set by an operator's stop; waiters are answered with
	// the run once it has ended.
	stopping bool
	waiters  []*actor.PID
}

// Local messages of the load-test grain (never cross members).
type (
	ltTick   struct{}
	ltSecond struct {
		id  string
		sec load.Second
		at  time.Time
	}
	ltDone struct {
		id  string
		res load.Result
		err error
	}
)

// ltFlushEvery is how many per-second figures make one record by default.
const ltFlushEvery = 5

func newLoadTestGrain(d *Deps) actor.Actor { return &loadTestGrain{deps: d} }

func (g *loadTestGrain) now() time.Time {
	if g.deps.LoadTests.Now != nil {
		return g.deps.LoadTests.Now()
	}
	return g.deps.Now()
}

// Receive is the grain's only entry point; all mutable state lives here.
func (g *loadTestGrain) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *cluster.ClusterInit:
		g.log = g.deps.Logger.With("grain", protocol.KindLoadTests)
		g.sys, g.self = ctx.ActorSystem(), ctx.Self()
		g.sched = loadtest.NewScheduler()
		g.activate()
		g.startTicker()
	case *wire.Request:
		g.handle(ctx, m)
	case *ltTick:
		g.onTick()
	case *ltSecond:
		g.onSecond(m)
	case *ltDone:
		g.onDone(m)
	case *actor.Stopping:
		g.shutdown()
	}
}

// activate recovers the history and schedules, and marks interrupted every
// run a previous activation left unfinished.
func (g *loadTestGrain) activate() {
	st := &loadtest.State{}
	g.j = journal{log: g.deps.Log, stream: protocol.LoadTestsID, timeout: 4 * g.deps.WriteTimeout}
	err := g.j.recover(context.Background(), func(b []byte) error { return json.Unmarshal(b, st) },
		func(off int64, data []byte) error { st.Apply(off, data); return nil })
	if err != nil {
		g.log.Warn("load-test activation failed", "error", err)
		return
	}
	st.Epoch = g.j.epoch
	g.st, g.ready = st, true
	g.snapshot() // covers the tail just read and this activation's marker
	for _, r := range st.Runs {
		if !r.Ended() {
			g.end(r, loadtest.End{State: loadtest.StateInterrupted, EndedAt: g.now().UTC(),
				Message: "The node running this test stopped before it finished; the figures recorded until then are kept."}, nil)
		}
	}
}

func (g *loadTestGrain) startTicker() {
	every := g.deps.LoadTests.Tick
	if every <= 0 {
		every = time.Second
	}
	stop := make(chan struct{})
	g.stopTick = stop
	sys, self := g.sys, g.self
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sys.Root.Send(self, &ltTick{})
			}
		}
	}()
}

func (g *loadTestGrain) handle(ctx actor.Context, req *wire.Request) {
	if !serving(ctx, g.dead, &g.ready, g.activate) {
		return
	}
	var r protocol.LoadTestRequest
	if !decode(ctx, req, &r) {
		return
	}
	if protocol.Writes(protocol.KindLoadTests, req.Op) {
		g.handleWrite(ctx, req, &r)
		return
	}
	switch req.Op {
	case protocol.OpLTPing:
		ctx.Respond(okResponse(struct{}{}))
	case protocol.OpLTList:
		runs, next := g.st.Page(max(r.Limit, 1), r.Before)
		ctx.Respond(okResponse(protocol.LoadTestPage{Runs: runs, Next: next}))
	case protocol.OpLTGet:
		run := g.st.Run(r.ID)
		if run == nil {
			ctx.Respond(&wire.Response{Code: protocol.CodeNotFound, Message: "No such load test."})
			return
		}
		ctx.Respond(okResponse(g.view(run, r.Since)))
	case protocol.OpLTStop:
		run := g.st.Run(r.ID)
		switch {
		case run == nil:
			ctx.Respond(&wire.Response{Code: protocol.CodeNotFound, Message: "No such load test."})
		case g.cur == nil || g.cur.id != run.ID:
			ctx.Respond(okResponse(run.Summary()))
		default:
			g.cur.stopping = true
			g.cur.cancel()
			g.cur.waiters = append(g.cur.waiters, ctx.Sender())
		}
	case protocol.OpSchList:
		list := make([]loadtest.Schedule, 0, len(g.st.Schedules))
		for _, sc := range g.st.Schedules {
			list = append(list, *sc)
		}
		ctx.Respond(okResponse(list))
	default:
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "unknown operation " + req.Op})
	}
}

// handleWrite serves one of the writing operations (protocol.Writes), once per command id.
func (g *loadTestGrain) handleWrite(ctx actor.Context, req *wire.Request, r *protocol.LoadTestRequest) {
	if len(req.Id) > room.MaxCommandID {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "command id too long"})
		return
	}
	answer := reply(func(r *wire.Response) { ctx.Respond(r) })
	if g.once.again(req.Id, answer) {
		return
	}
	answer = g.once.track(req.Id, answer)
	switch req.Op {
	case protocol.OpLTStart:
		answer(g.startRun(r.Spec, nil))
	case protocol.OpSchAdd:
		answer(g.addSchedule(r.Schedule))
	case protocol.OpSchRemove:
		if g.st.Schedule(r.ID) == nil {
			answer(&wire.Response{Code: protocol.CodeNotFound, Message: "No such schedule."})
			return
		}
		answer(g.write([]loadtest.Event{{Type: loadtest.TypeScheduleRemoved, ScheduleID: r.ID}}, struct{}{}))
	}
}

// serving reports whether a grain that writes synchronously can serve a
// request, activating it first when it is not ready; otherwise it answers
// the request itself (superseded, or the log unavailable).
func serving(ctx actor.Context, dead bool, ready *bool, activate func()) bool {
	if dead {
		ctx.Respond(errResponse(protocol.ErrSuperseded))
		return false
	}
	if !*ready {
		activate()
		if !*ready {
			ctx.Respond(errResponse(persistence.ErrUnavailable))
			return false
		}
	}
	return true
}

// view is run with the figures of the seconds after since, those not yet
// in the log included.
func (g *loadTestGrain) view(run *loadtest.Run, since int) loadtest.Run {
	v := run.Summary()
	for _, s := range run.Series {
		if s.Index > since {
			v.Series = append(v.Series, s)
		}
	}
	if g.cur != nil && g.cur.id == run.ID {
		for _, s := range g.cur.pending {
			if s.Index > since {
				v.Series = append(v.Series, s)
			}
		}
	}
	return v
}

// startRun records a new run of spec and starts its runner; with sc set,
// the run is that schedule's. A run while another is going on is refused
// (conflict), or for a schedule recorded as skipped.
func (g *loadTestGrain) startRun(spec loadtest.Spec, sc *loadtest.Schedule) *wire.Response {
	now := g.now().UTC()
	run := &loadtest.Run{ID: "lt" + protocol.RandomID(8), Spec: spec, State: loadtest.StateRunning, StartedAt: now}
	if sc != nil {
		run.Scheduled, run.ScheduleID = true, sc.ID
	}
	if busy := g.st.Running(); busy != nil {
		if sc == nil {
			return &wire.Response{Code: protocol.CodeConflict, Message: "Load test " + busy.ID + " is running; one runs at a time. Stop it or wait until it ends."}
		}
		run.State, run.EndedAt, run.Message = loadtest.StateSkipped, &now, "Load test "+busy.ID+" was running when the schedule came due."
		return g.write([]loadtest.Event{{Type: loadtest.TypeRunStarted, Run: run}}, run)
	}
	if g.deps.LoadTests.BaseURL == "" {
		run.State, run.EndedAt, run.Message = loadtest.StateFailed, &now, "This node has no public URL to send load to."
		return g.write([]loadtest.Event{{Type: loadtest.TypeRunStarted, Run: run}}, run)
	}
	res := g.write([]loadtest.Event{{Type: loadtest.TypeRunStarted, Run: run}}, run)
	if res.Code == "" {
		g.launch(run)
	}
	return res
}

func (g *loadTestGrain) addSchedule(sc *loadtest.Schedule) *wire.Response {
	if sc == nil {
		return &wire.Response{Code: protocol.CodeInvalid, Message: "schedule\x00is required"}
	}
	if len(g.st.Schedules) >= loadtest.MaxSchedules {
		return &wire.Response{Code: protocol.CodeConflict, Message: "At most 100 schedules; delete one first."}
	}
	s := *sc
	s.ID, s.CreatedAt = "ls"+protocol.RandomID(8), g.now().UTC()
	return g.write([]loadtest.Event{{Type: loadtest.TypeScheduleAdded, Schedule: &s}}, s)
}

func (g *loadTestGrain) onTick() {
	if !g.ready || g.dead {
		return
	}
	for _, sc := range g.sched.Due(g.st.Schedules, g.now()) {
		g.log.Info("schedule due", "schedule", sc.ID, "cron", sc.Cron)
		if r := g.startRun(sc.Spec, sc); r.Code != "" {
			g.log.Warn("scheduled load test not started", "schedule", sc.ID, "error", r.Message)
		}
	}
}

func (g *loadTestGrain) onSecond(m *ltSecond) {
	if g.cur == nil || g.cur.id != m.id || !g.ready {
		return
	}
	s := m.sec
	sec := loadtest.Second{Index: s.Index, T: m.at.Unix(), Requests: s.Requests, OK: s.OK, Errors: s.ErrorCount(),
		AchievedRate: s.Rate, P50Ms: ms(s.P50), P95Ms: ms(s.P95)}
	if s.Requests > 0 {
		sec.ErrorRate = float64(sec.Errors) / float64(s.Requests)
	}
	g.cur.pending = append(g.cur.pending, sec)
	every := g.deps.LoadTests.FlushSeconds
	if every <= 0 {
		every = ltFlushEvery
	}
	if len(g.cur.pending) >= every {
		if r := g.write([]loadtest.Event{{Type: loadtest.TypeRunSeconds, RunID: m.id, Seconds: g.cur.pending}}, nil); r.Code == "" {
			g.cur.pending = nil
		}
	}
}

func (g *loadTestGrain) onDone(m *ltDone) {
	a := g.cur
	if a == nil || a.id != m.id {
		return
	}
	run := g.st.Run(m.id)
	if run == nil || run.Ended() {
		g.cur = nil
		return
	}
	end := loadtest.End{State: loadtest.StateFinished, EndedAt: g.now().UTC()}
	switch {
	case a.stopping:
		end.State, end.Message = loadtest.StateStopped, "Stopped by the operator."
	case m.err != nil && m.res.Requests == 0:
		end.State, end.Message = loadtest.StateFailed, m.err.Error()
	case m.err != nil:
		end.State, end.Message = loadtest.StateInterrupted, m.err.Error()
	}
	if m.res.Requests > 0 {
		end.Totals = totalsOf(m.res)
	}
	if end.State == loadtest.StateFinished && run.Scheduled && end.Totals != nil {
		judged := *run
		judged.Totals = end.Totals
		end.RegressionFigures, end.RegressionReasons = loadtest.Judge(&judged, g.st.Runs)
		end.Regression = len(end.RegressionFigures) > 0
	}
	g.end(run, end, a.pending)
	g.cur = nil
	for _, w := range a.waiters {
		g.sys.Root.Send(w, okResponse(run.Summary()))
	}
}

// end records how run ended, with its last per-second figures.
func (g *loadTestGrain) end(run *loadtest.Run, end loadtest.End, pending []loadtest.Second) {
	var evs []loadtest.Event
	if len(pending) > 0 {
		evs = append(evs, loadtest.Event{Type: loadtest.TypeRunSeconds, RunID: run.ID, Seconds: pending})
	}
	evs = append(evs, loadtest.Event{Type: loadtest.TypeRunEnded, RunID: run.ID, End: &end})
	if r := g.write(evs, nil); r.Code != "" {
		g.log.Warn("recording the end of a load test failed; the next activation marks it interrupted", "run", run.ID, "error", r.Message)
	}
}

// write appends evs, reads the stream back and applies it (synchronously:
// a few records a run, one a few seconds while it lasts).
func (g *loadTestGrain) write(evs []loadtest.Event, result any) *wire.Response {
	at := g.deps.Now().UnixNano()
	data := make([][]byte, 0, len(evs))
	for _, e := range evs {
		e.V, e.Epoch, e.At = 1, g.j.epoch, at
		b, err := json.Marshal(e)
		if err != nil {
			return errResponse(err)
		}
		data = append(data, b)
	}
	n := 0
	err := g.j.commit(data, func(off int64, data []byte) { g.st.Apply(off, data); n++ })
	if errors.Is(err, protocol.ErrSuperseded) {
		g.dead = true
		if g.cur != nil {
			g.cur.cancel()
		}
	}
	if err != nil {
		return errResponse(err)
	}
	if g.since += n; g.since >= 200 {
		g.since = 0
		g.snapshot()
	}
	if run, ok := result.(*loadtest.Run); ok {
		if cur := g.st.Run(run.ID); cur != nil {
			return okResponse(cur.Summary())
		}
	}
	return okResponse(result)
}

// maxSnapshot bounds a snapshot's size (a Kafka record's default limit is
// 1 MiB); a larger state is rebuilt from the previous snapshot and the log.
const maxSnapshot = 900 << 10

func (g *loadTestGrain) snapshot() {
	_ = g.j.saveSnapshot(g.st, maxSnapshot)
}

// shutdown stops the ticker and the run in progress, and records the run
// as interrupted (the next activation would otherwise).
func (g *loadTestGrain) shutdown() {
	if g.stopTick != nil {
		close(g.stopTick)
		g.stopTick = nil
	}
	if g.ready && g.since > 0 {
		g.snapshot()
	}
	a := g.cur
	if a == nil {
		return
	}
	a.cancel()
	select {
	case <-a.done:
	case <-time.After(g.deps.WriteTimeout):
	}
	if run := g.st.Run(a.id); run != nil && !run.Ended() && !g.dead {
		g.end(run, loadtest.End{State: loadtest.StateInterrupted, EndedAt: g.now().UTC(),
			Message: "The node running this test stopped before it finished; the figures recorded until then are kept."}, a.pending)
	}
	g.cur = nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func totalsOf(r load.Result) *loadtest.Totals {
	t := &loadtest.Totals{Requests: r.Requests, OK: r.OK, Errors: r.ErrorCount(), ErrorRate: r.ErrorRate(),
		AchievedRate: r.Achieved(), ElapsedSeconds: r.Elapsed.Seconds()}
	if len(r.Errors) > 0 {
		t.ErrorsByClass = map[string]int64{}
		for c, n := range r.Errors {
			t.ErrorsByClass[string(c)] = n
		}
	}
	if r.Latency != nil {
		t.P50Ms, t.P95Ms = ms(r.Latency.Quantile(0.50)), ms(r.Latency.Quantile(0.95))
		t.P99Ms, t.MaxMs = ms(r.Latency.Quantile(0.99)), ms(r.Latency.Max())
	}
	return t
}
