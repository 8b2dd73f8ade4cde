package grain

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
)

const (
	tickInterval       = 100 * time.Millisecond
	checkpointInterval = time.Second
	snapshotEvery      = 500
	snapshotInterval   = 30 * time.Second
	subscriberTTL      = 6 * time.Second
	maxWaiters         = 100_000
)

// Local messages (never cross members).
type (
	tick      struct{}
	writeDone struct {
		res  appended
		task *task
	}
	snapshotDone struct{ err error }
)

type subscriber struct {
	pid     *actor.PID
	expires time.Time
}

type roomGrain struct {
	deps *Deps
	id   string
	self *actor.PID
	sys  *actor.ActorSystem
	log  *slog.Logger

	st      *room.State
	writes  writePipeline
	ready   bool
	stopped bool
	lastTry time.Time
	failed  error // why the last activation failed
	// locked is why the room's keys do not open with this node's master
	// key (nil: they do, or were not tried): the grain then answers
	// ErrRoomUnavailable, as a front that cannot open them does.
	locked    error
	secret    []byte
	ticketKey []byte

	reserving bool

	blocks blockSizer

	checkpointAt time.Time
	snapshotAt   time.Time
	sinceSnap    int
	snapshotting bool

	subs  map[string]*subscriber
	dirty bool

	// presence is when each waiting number was last seen, for abandon
	// detection; it is not in the log and starts afresh on activation.
	presence   *room.Presence
	abandonAt  time.Time
	abandoning bool

	// returns are jump numbers whose tickets came back, waiting to be
	// placed (room_returns.go).
	returns   []uint64
	returning bool

	// stats samples the dashboard figures once a second.
	stats roomStats
	// powAuto asks for proof of work under pressure (pow.auto).
	powAuto powAuto

	// ticker and pace steer the ticks: a quiet room ticks slowly, a gone
	// one rests (rest.go).
	ticker *ticker
	pace   pace

	// poll schedules the self-regulating rate's health checks.
	poll poller
	desk joinDesk
	// draw steps a due committed draw (room_draw.go).
	draw drawer
	// schedule applies the room's scheduled events (room_schedule.go).
	schedule scheduler

	// unreadable, once set, refuses the room: its log holds what a newer
	// release wrote (unreadable.go).
	unreadable error
	// once answers a retried write with its first answer (room_once.go).
	once onceDesk
}

func newRoomGrain(d *Deps) actor.Actor {
	return &roomGrain{deps: d, subs: map[string]*subscriber{}}
}

// Receive is the grain's only entry point; all mutable state lives here.
func (g *roomGrain) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *cluster.ClusterInit:
		g.id = m.Identity.Identity
		g.self = ctx.Self()
		g.sys = ctx.ActorSystem()
		g.log = g.deps.Logger.With("room", g.id)
		g.pace.heard(g.now(), time.Now())
		g.activate()
		g.startTicker()
	case *wire.Request:
		g.handle(ctx, m)
	case *writeDone:
		g.onWriteDone(m)
	case *snapshotDone:
		g.snapshotting = false
		if m.err != nil {
			g.log.Warn("snapshot failed", "error", m.err)
		}
	case *tick:
		g.onTick()
	case *healthDone:
		g.onHealthDone(m)
	case *actor.Stopping:
		g.shutdown()
	}
}

func (g *roomGrain) now() time.Time { return g.deps.Now() }

// activate recovers the room from its log. On failure the grain stays up
// and answers "unavailable"; the next request tries again.
func (g *roomGrain) activate() {
	g.lastTry = g.now()
	if g.deps.Leaving != nil && g.deps.Leaving() {
		// A member handing its rooms over takes none: its marker would
		// fence off the member the room is moving to, and the two would
		// take the room from each other until every node has dropped this
		// one. The caller tries again, on the new owner once it knows.
		return
	}
	st := room.New(g.id)
	j := journal{log: g.deps.Log, stream: g.id, timeout: 4 * g.deps.WriteTimeout}
	tail := 0
	err := j.recover(context.Background(), func(b []byte) error {
		return decodeSnapshot(b, st)
	}, func(off int64, data []byte) error {
		tail++
		return g.applyTo(st, off, data)
	})
	g.writes = writePipeline{j: j, limit: g.deps.WriteQueue, now: func() int64 { return g.now().UnixNano() }, start: g.startWrite}
	g.failed = err
	if g.refuseNewer(err) {
		return
	}
	if err != nil {
		g.log.Warn("activation failed", "error", err)
		return
	}
	if st.Keys == nil {
		st.Keys = map[string]*room.Key{}
	}
	if st.Codes == nil {
		st.Codes = map[string]*room.Code{}
	}
	st.Recovered()
	g.st = st
	g.presence = room.NewPresence(st, g.now().UnixNano())
	if err := g.unseal(); err != nil {
		if g.locked == nil {
			g.log.Error("room not served: its keys do not open (master key differs between nodes?)", "error", err)
		}
		g.locked = err
		return
	}
	g.locked = nil
	g.ready = true
	g.checkpointAt, g.snapshotAt = g.now(), g.now()
	// The tail read counts towards the next snapshot (room_snapshot.go).
	g.sinceSnap = tail
	g.dirty = true
	if g.deps.Metrics != nil {
		g.deps.Metrics.Activations.Inc()
	}
	g.log.Info("room activated", "epoch", j.epoch, "issued", st.Issued, "exists", st.Exists)
}

func (g *roomGrain) unseal() error {
	if !g.st.Exists {
		return nil
	}
	sec, err := g.deps.Sealer.Open(g.st.SecretSealed, []byte("room:"+g.id+":secret"))
	if err != nil {
		return err
	}
	tk, err := g.deps.Sealer.Open(g.st.TicketKeySealed, []byte("room:"+g.id+":ticket"))
	if err != nil {
		return err
	}
	g.secret, g.ticketKey = sec, tk
	return nil
}

func (g *roomGrain) handle(ctx actor.Context, req *wire.Request) {
	g.wake()
	if g.stopped {
		ctx.Respond(errResponse(protocol.ErrSuperseded))
		return
	}
	if g.unreadable != nil {
		ctx.Respond(errResponse(g.unreadable))
		return
	}
	if !g.ready {
		if g.now().Sub(g.lastTry) > 500*time.Millisecond {
			g.activate()
		}
		if g.locked != nil {
			ctx.Respond(errResponse(protocol.ErrRoomUnavailable))
			return
		}
		if !g.ready {
			ctx.Respond(notActivated(g.failed))
			return
		}
	}
	g.dispatch(ctx, req)
}

func (g *roomGrain) blockSize() uint64 {
	return g.blocks.size(g.now(), g.desk.pending)
}

// reserve queues a block reservation unless one is already on its way.
func (g *roomGrain) reserve() {
	if g.reserving {
		return
	}
	g.reserving = true
	size := g.blockSize()
	g.blocks.reserved(size, g.now())
	t := &task{kind: "reserve", decide: func(now int64) ([]room.Event, error) {
		base := g.st.Reserved
		if g.st.Issued > base {
			base = g.st.Issued
		}
		return g.st.DecideReserve(base+size, now), nil
	}, done: func(err error) {
		g.reserving = false
		g.grantBatches(err)
	}}
	g.writes.first(t)
}

// startWrite runs one fenced write on its own goroutine and hands the
// outcome back to the grain as a message.
func (g *roomGrain) startWrite(t *task, from int64, data [][]byte) {
	j, self, root := g.writes.j, g.self, g.sys.Root
	go func() {
		res := j.write(context.Background(), from, data)
		root.Send(self, &writeDone{res: res, task: t})
	}()
}

func (g *roomGrain) onWriteDone(m *writeDone) {
	g.logWritten(m.res.err)
	if m.res.err != nil {
		g.log.Warn("write failed", "kind", m.task.kind, "error", m.res.err)
	}
	n, err := g.writes.finish(m.res, m.task, func(off int64, data []byte) { _ = g.applyTo(g.st, off, data) })
	switch {
	case errors.Is(err, protocol.ErrSuperseded):
		g.supersede()
	case err == nil:
		g.sinceSnap += n
		g.dirty = true
		g.publish(true)
	}
}

// applyTo applies a record of the room's log to st. A record a newer
// release wrote that this one cannot read stops the replay (the room is
// refused, unreadable.go); another undecodable record is skipped.
func (g *roomGrain) applyTo(st *room.State, offset int64, data []byte) error {
	e, err := room.DecodeEvent(data)
	if err != nil {
		if newer := asNewer(err); newer != nil {
			return newer
		}
		g.log.Error("skipping undecodable event", "offset", offset, "error", err)
		return nil
	}
	st.Apply(offset, e)
	return nil
}

// supersede stops serving at once: a newer activation owns the room.
func (g *roomGrain) supersede() {
	g.log.Warn("superseded by a newer activation; stopping", "epoch", g.writes.j.epoch)
	g.stopped = true
	g.writes.stop(protocol.ErrSuperseded)
	g.poll.stop()
	g.draw.stop()
	g.failBatches(protocol.ErrSuperseded)
	g.sys.Root.Poison(g.self)
}

func (g *roomGrain) onTick() {
	if !g.ready || g.stopped {
		return
	}
	now := g.now()
	g.checkBlockWait(now)
	g.blocks.tick(now)
	g.drawIfDue(now)
	g.schedule.tick(g, now)
	if g.st.Live() && g.st.Issued != g.st.Checkpointed && now.Sub(g.checkpointAt) >= checkpointInterval && !g.writes.writing {
		g.checkpointAt = now
		g.writes.add(&task{kind: "checkpoint", decide: func(now int64) ([]room.Event, error) {
			return g.st.DecideCheckpoint(now, false), nil
		}, done: func(error) {}})
	}
	if now.Sub(g.abandonAt) >= abandonInterval {
		g.abandonAt = now
		g.scanAbandoned(now.UnixNano())
	}
	if !g.snapshotting && g.sinceSnap > 0 && (g.sinceSnap >= snapshotEvery || now.Sub(g.snapshotAt) >= snapshotInterval) {
		g.saveSnapshot()
	}
	g.pollHealth(now)
	g.powAuto.tick(g, now)
	g.stats.record(&g.st.View, now, g.deps.Metrics)
	for k, s := range g.subs {
		if now.After(s.expires) {
			delete(g.subs, k)
		}
	}
	g.publish(false)
	g.ticker.setPeriod(g.tickPeriod(now))
	g.restIfGone(now)
}

func (g *roomGrain) saveSnapshot() {
	data, err := encodeSnapshot(g.st)
	if err != nil {
		g.log.Error("encode snapshot", "error", err)
		return
	}
	g.snapshotting, g.sinceSnap, g.snapshotAt = true, 0, g.now()
	l, stream, off, self, root, to := g.deps.Log, g.id, g.writes.j.verified, g.self, g.sys.Root, g.deps.WriteTimeout
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*to)
		defer cancel()
		err := l.SaveSnapshot(ctx, stream, persistence.Snapshot{Offset: off, Data: data})
		root.Send(self, &snapshotDone{err: err})
	}()
}

// publish pushes the view to subscribed front nodes when it changed.
func (g *roomGrain) publish(force bool) {
	if !g.dirty && !force {
		return
	}
	g.dirty = false
	if len(g.subs) == 0 {
		return
	}
	b, err := json.Marshal(g.st.View)
	if err != nil {
		return
	}
	push := &wire.Push{Room: g.id, View: b}
	for _, s := range g.subs {
		g.sys.Root.Send(s.pid, push)
	}
}

// shutdown writes a final checkpoint so the next activation continues
// without ghosts, bounded in time.
func (g *roomGrain) shutdown() {
	g.stopTicker()
	g.poll.stop()
	g.draw.stop()
	g.stats.forget(g.deps.Metrics)
	defer g.finalSnapshot() // after the checkpoint; a deleted room's too
	if !g.ready || g.stopped || !g.st.Live() {
		return
	}
	evs := g.st.DecideCheckpoint(g.now().UnixNano(), true)
	b, err := evs[0].Encode()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.deps.WriteTimeout)
	defer cancel()
	if _, err := g.deps.Log.Append(ctx, g.id, b); err != nil {
		g.log.Warn("final checkpoint failed", "error", err)
	}
}
