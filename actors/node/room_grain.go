package node

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/health"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// Sealer seals secrets at rest under the node master key.
type Sealer interface {
	Seal(plaintext, associatedData []byte) []byte
	Open(sealed, associatedData []byte) ([]byte, error)
}

// Hasher hashes high-entropy secrets (API keys, bypass codes).
type Hasher func(secret string) []byte

// Deps are what grains need from the node.
type Deps struct {
	Log    persistence.Log
	Sealer Sealer
	Hash   Hasher
	Now    func() time.Time
	Logger *slog.Logger
	// WriteTimeout bounds one append with its read-back.
	WriteTimeout time.Duration
	Metrics      *Metrics
	LoadTests    LoadTestDeps
	// Health fetches the shops' health URLs for the self-regulating rate;
	// nil turns polling off.
	Health health.Fetcher
	// Beacon, when set, gives committed draws a public random round;
	// BeaconWait bounds the wait for it past its due time (default 30 s).
	Beacon     BeaconSource
	BeaconWait time.Duration
	// HealthInterval, when set, replaces every room's intervalSeconds
	// (tests only: the public configuration allows 5 s at least).
	HealthInterval time.Duration
}

const (
	tickInterval       = 100 * time.Millisecond
	checkpointInterval = time.Second
	snapshotEvery      = 500
	snapshotInterval   = 30 * time.Second
	subscriberTTL      = 6 * time.Second
	maxWaiters         = 100_000
	// abandonInterval is how often the grain looks for abandoned numbers
	// ahead of the window; abandonAhead how far ahead it looks, a little
	// more than one interval of the rate, so the window never reaches a
	// position no scan has examined.
	abandonInterval = 2 * time.Second
	abandonAhead    = 3 * time.Second
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

// task is one queued write: decide computes its events against the state
// as it is when the write starts (so concurrent redemptions cannot both pass
// a usage limit), done answers the caller after the events are verified and
// applied.
type task struct {
	decide func(now int64) ([]room.Event, error)
	done   func(err error)
	kind   string
}

type joinWaiter struct {
	ctx actor.Context
	pid *actor.PID
}

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

	st        *room.State
	j         journal
	ready     bool
	stopped   bool
	lastTry   time.Time
	secret    []byte
	ticketKey []byte

	writing   bool
	queue     []*task
	reserving bool
	waiters   []*actor.PID
	waiterCtx []actor.Context

	blocks blockSizer

	checkpointAt time.Time
	snapshotAt   time.Time
	sinceSnap    int
	snapshotting bool

	subs    map[string]*subscriber
	dirty   bool
	pubView []byte

	// presence is when each waiting number was last seen, for abandon
	// detection; it is not in the log and starts afresh on activation.
	presence   *room.Presence
	abandonAt  time.Time
	abandoning bool

	// stats samples the dashboard figures once a second.
	stats roomStats

	stopTick chan struct{}
	// kick and period steer the ticker: a quiet room ticks slowly, a gone
	// one rests (rest.go); lastRequest is in the grain's clock, heardAt in
	// real time.
	kick        chan struct{}
	period      atomic.Int64
	lastRequest time.Time
	heardAt     time.Time
	resting     bool

	// poll schedules the self-regulating rate's health checks.
	poll poller
	desk joinDesk
	// draw steps a due committed draw (room_draw.go).
	draw drawer
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
		g.lastRequest, g.heardAt = g.now(), time.Now()
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
	st := room.New(g.id)
	g.j = journal{log: g.deps.Log, stream: g.id, timeout: 4 * g.deps.WriteTimeout}
	err := g.j.recover(context.Background(), func(b []byte) error {
		return json.Unmarshal(b, st)
	}, func(off int64, data []byte) error {
		e, err := room.DecodeEvent(data)
		if err != nil {
			g.log.Error("skipping undecodable event", "offset", off, "error", err)
			return nil
		}
		st.Apply(off, e)
		return nil
	})
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
		g.log.Error("cannot open room secrets (wrong master key?)", "error", err)
		return
	}
	g.ready = true
	g.checkpointAt, g.snapshotAt = g.now(), g.now()
	g.dirty = true
	if g.deps.Metrics != nil {
		g.deps.Metrics.Activations.Inc()
	}
	g.log.Info("room activated", "epoch", g.j.epoch, "issued", st.Issued, "exists", st.Exists)
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

// startTicker sends the grain a tick every tickInterval, or every
// quietTick while the room is quiet (rest.go); a kick brings the next tick
// at once.
func (g *roomGrain) startTicker() {
	g.stopTick = make(chan struct{})
	g.kick = make(chan struct{}, 1)
	g.period.Store(int64(tickInterval))
	self, root, stop, kick, period := g.self, g.sys.Root, g.stopTick, g.kick, &g.period
	go func() {
		t := time.NewTimer(tickInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-kick:
				// Since Go 1.23 a stopped timer's channel holds no stale
				// value, and Reset below starts it afresh.
				t.Stop()
			case <-t.C:
			}
			root.Send(self, &tick{})
			t.Reset(time.Duration(period.Load()))
		}
	}()
}

func (g *roomGrain) respond(ctx actor.Context, r *wire.Response) { ctx.Respond(r) }

func (g *roomGrain) handle(ctx actor.Context, req *wire.Request) {
	g.wake()
	if g.stopped {
		g.respond(ctx, errResponse(ErrSuperseded))
		return
	}
	if !g.ready {
		if g.now().Sub(g.lastTry) > 500*time.Millisecond {
			g.activate()
		}
		if !g.ready {
			g.respond(ctx, errResponse(persistence.ErrUnavailable))
			return
		}
	}
	now := g.now().UnixNano()
	switch req.Op {
	case opJoin:
		g.join(ctx)
	case opJoinBatch:
		g.joinBatch(ctx, req)
	case opToken:
		var r TokenRequest
		if !decode(ctx, req, &r) {
			return
		}
		g.respond(ctx, g.tokenFor(r.Number, now))
	case opStats:
		var r StatsRequest
		if decode(ctx, req, &r) {
			g.answerStats(ctx, r)
		}
	case opSync:
		var r SyncRequest
		if !decode(ctx, req, &r) {
			return
		}
		pid := actor.NewPID(r.Address, r.ID)
		g.subs[pid.String()] = &subscriber{pid: pid, expires: g.now().Add(subscriberTTL)}
		g.seen(r.Seen, now)
		g.respond(ctx, okResponse(g.st.View))
	case opGet:
		var r AdminRequest
		if !decode(ctx, req, &r) || !g.authorized(ctx, &r) {
			return
		}
		g.respond(ctx, okResponse(g.st.View))
	case opAuthKey:
		var r AdminRequest
		if !decode(ctx, req, &r) || !g.authorized(ctx, &r) {
			return
		}
		g.respond(ctx, okResponse(r.Actor))
	case opKeyList, opCodeList, opAudit:
		var r AdminRequest
		if !decode(ctx, req, &r) {
			return
		}
		if len(r.KeyHash) > 0 {
			// Only the operator lists keys, codes and the audit trail.
			g.respond(ctx, &wire.Response{Code: CodeForbidden, Message: "not allowed with an API key"})
			return
		}
		switch req.Op {
		case opKeyList:
			g.respond(ctx, okResponse(g.keyInfos()))
		case opCodeList:
			g.respond(ctx, okResponse(g.codeInfos()))
		default:
			g.respond(ctx, okResponse(g.st.Audit))
		}
	case opHealthCheck, opRateLog:
		var r AdminRequest
		if !decode(ctx, req, &r) || !g.authorized(ctx, &r) {
			return
		}
		if req.Op == opRateLog {
			g.respond(ctx, okResponse(g.rateLog()))
		} else {
			g.startHealthTest(ctx, &r)
		}
	default:
		g.handleWrite(ctx, req, now)
	}
}

func decode(ctx actor.Context, req *wire.Request, v any) bool {
	if len(req.Body) == 0 {
		return true
	}
	if err := json.Unmarshal(req.Body, v); err != nil {
		ctx.Respond(&wire.Response{Code: CodeInvalid, Message: "malformed request body"})
		return false
	}
	return true
}

// authorized checks a qak_ key's hash against the room's keys; the admin
// token was checked by the front. It sets r.Actor for the audit trail.
func (g *roomGrain) authorized(ctx actor.Context, r *AdminRequest) bool {
	if len(r.KeyHash) == 0 {
		return true
	}
	k, ok := g.st.KeyByHash(r.KeyHash)
	if !ok || !g.st.Live() {
		g.respond(ctx, &wire.Response{Code: CodeUnauthorized, Message: "unknown API key"})
		return false
	}
	r.Actor = "key:" + k.Name
	return true
}

// handleWrite queues an administrative change.
func (g *roomGrain) handleWrite(ctx actor.Context, req *wire.Request, now int64) {
	sender := ctx.Sender()
	reply := func(r *wire.Response) {
		if sender != nil {
			g.sys.Root.Send(sender, r)
		}
	}
	var t *task
	switch req.Op {
	case opCreate:
		var r CreateRequest
		if !decode(ctx, req, &r) {
			return
		}
		secret, tk := newSecret(), randomBytes(32)
		secretSealed := g.deps.Sealer.Seal([]byte(secret), []byte("room:"+g.id+":secret"))
		tkSealed := g.deps.Sealer.Seal(tk, []byte("room:"+g.id+":ticket"))
		dk := g.newDrawKey()
		t = &task{kind: "create", decide: func(now int64) ([]room.Event, error) {
			return g.st.DecideCreate(r.Config, secretSealed, tkSealed, now, r.Actor, dk)
		}, done: func(err error) {
			if err != nil {
				reply(errResponse(err))
				return
			}
			g.secret, g.ticketKey = []byte(secret), tk
			reply(okResponse(CreateResult{View: g.st.View, Secret: secret}))
		}}
	case opConfigure, opDelete, opRotate, opKeyAdd, opKeyRemove, opCodeAdd, opCodeChange, opCodeRemove:
		var r AdminRequest
		if !decode(ctx, req, &r) || !g.authorized(ctx, &r) {
			return
		}
		t = g.adminTask(req.Op, &r, reply)
		if t == nil {
			reply(&wire.Response{Code: CodeForbidden, Message: "not allowed with an API key"})
			return
		}
	case opRedeem:
		var r RedeemRequest
		if !decode(ctx, req, &r) {
			return
		}
		h := g.deps.Hash(r.Code)
		t = &task{kind: "redeem", decide: func(now int64) ([]room.Event, error) {
			evs, _, err := g.st.DecideRedeem(h, now)
			return evs, err
		}, done: func(err error) {
			if err != nil {
				reply(errResponse(err))
				return
			}
			reply(g.mint(0, true, g.now()))
		}}
	default:
		g.respond(ctx, &wire.Response{Code: CodeInvalid, Message: "unknown operation " + req.Op})
		return
	}
	g.queue = append(g.queue, t)
	g.pump()
}

// adminTask builds the task for an administrative change. Keys may only
// configure their room.
func (g *roomGrain) adminTask(op string, r *AdminRequest, reply func(*wire.Response)) *task {
	byKey := len(r.KeyHash) > 0
	if byKey && op != opConfigure {
		return nil
	}
	simple := func(decide func(now int64) ([]room.Event, error), result func() any) *task {
		return &task{kind: op, decide: decide, done: func(err error) {
			if err != nil {
				reply(errResponse(err))
				return
			}
			reply(okResponse(result()))
		}}
	}
	view := func() any { return g.st.View }
	switch op {
	case opConfigure:
		if r.Config == nil {
			return simple(func(int64) ([]room.Event, error) {
				return nil, &room.FieldError{Field: "body", Message: "the site configuration is required"}
			}, view)
		}
		cfg := *r.Config
		dk := g.newDrawKey()
		return simple(func(now int64) ([]room.Event, error) { return g.st.DecideConfigure(cfg, now, r.Actor, dk) }, view)
	case opDelete:
		return simple(func(now int64) ([]room.Event, error) { return g.st.DecideDelete(now, r.Actor) }, view)
	case opRotate:
		secret := newSecret()
		sealed := g.deps.Sealer.Seal([]byte(secret), []byte("room:"+g.id+":secret"))
		return simple(func(now int64) ([]room.Event, error) { return g.st.DecideRotateSecret(sealed, now, r.Actor) },
			func() any {
				g.secret = []byte(secret)
				return map[string]string{"secret": secret}
			})
	case opKeyAdd:
		id, key := "k"+randomID(6), "qak_"+g.id+"_"+base64.RawURLEncoding.EncodeToString(randomBytes(24))
		h := g.deps.Hash(key)
		return simple(func(now int64) ([]room.Event, error) { return g.st.DecideAddKey(id, r.Name, h, now, r.Actor) },
			func() any {
				k := g.st.Keys[id]
				return KeyInfo{ID: id, Name: k.Name, Key: key, CreatedAt: time.Unix(0, k.CreatedAt).UTC()}
			})
	case opKeyRemove:
		return simple(func(now int64) ([]room.Event, error) { return g.st.DecideRemoveKey(r.ID, now, r.Actor) },
			func() any { return map[string]string{"id": r.ID} })
	case opCodeAdd:
		id, code := "c"+randomID(6), newCode()
		h := g.deps.Hash(code)
		return simple(func(now int64) ([]room.Event, error) {
			return g.st.DecideAddCode(room.CodeAdded{ID: id, Label: r.Label, Hash: h, UsageLimit: r.Limit, ExpiresAt: r.Expires}, now, r.Actor)
		}, func() any {
			ci := codeInfo(g.st.Codes[id])
			ci.Code = code
			return ci
		})
	case opCodeChange:
		return simple(func(now int64) ([]room.Event, error) {
			return g.st.DecideChangeCode(r.ID, r.Disable, now, r.Actor)
		}, func() any { return codeInfo(g.st.Codes[r.ID]) })
	case opCodeRemove:
		return simple(func(now int64) ([]room.Event, error) { return g.st.DecideRemoveCode(r.ID, now, r.Actor) },
			func() any { return map[string]string{"id": r.ID} })
	}
	return nil
}

// join hands out a number from the current block, or waits for the next
// block when this one is used up.
func (g *roomGrain) join(ctx actor.Context) {
	n, err := g.st.Join(g.now().UnixNano())
	switch err {
	case nil:
		g.joined(n, func(r *wire.Response) { ctx.Respond(r) })
	case room.ErrNeedBlock:
		if len(g.waiters) >= maxWaiters {
			ctx.Respond(errResponse(persistence.ErrUnavailable))
			return
		}
		g.waiters = append(g.waiters, ctx.Sender())
		g.reserve()
	default:
		ctx.Respond(errResponse(err))
	}
}

func (g *roomGrain) joined(n uint64, reply func(*wire.Response)) {
	g.blocks.issued(1)
	g.dirty = true
	g.seen([]uint64{n}, g.now().UnixNano())
	if g.deps.Metrics != nil {
		g.deps.Metrics.Joins.Inc()
	}
	reply(okResponse(JoinResult{Number: n, Ticket: room.SignTicket(g.ticketKey, g.id, n), View: g.st.View}))
	if g.st.Reserved-g.st.Issued < g.blocks.low() {
		g.reserve()
	}
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
		waiters := g.waiters
		g.waiters = nil
		for _, w := range waiters {
			w := w
			reply := func(r *wire.Response) {
				if w != nil {
					g.sys.Root.Send(w, r)
				}
			}
			if err != nil {
				reply(errResponse(err))
				continue
			}
			n, jerr := g.st.Join(g.now().UnixNano())
			if jerr == room.ErrNeedBlock {
				g.waiters = append(g.waiters, w)
				continue
			}
			if jerr != nil {
				reply(errResponse(jerr))
				continue
			}
			g.joined(n, reply)
		}
		if len(g.waiters) > 0 {
			g.reserve()
		}
		g.grantBatches(err)
	}}
	// Reservations go first: joins wait on them.
	g.queue = append([]*task{t}, g.queue...)
	g.pump()
}

// pump starts the next queued write unless one is in flight. Writes are
// strictly one after another, so read-back covers each in order.
func (g *roomGrain) pump() {
	for !g.writing && len(g.queue) > 0 && !g.stopped {
		t := g.queue[0]
		g.queue = g.queue[1:]
		evs, err := t.decide(g.now().UnixNano())
		if err != nil {
			t.done(err)
			continue
		}
		data := make([][]byte, 0, len(evs))
		for i := range evs {
			b, err := evs[i].Encode()
			if err != nil {
				t.done(fmt.Errorf("encode event: %w", err))
				data = nil
				break
			}
			data = append(data, b)
		}
		if data == nil && len(evs) > 0 {
			continue
		}
		g.writing = true
		j, from, self, root := g.j, g.j.verified, g.self, g.sys.Root
		go func() {
			res := j.write(context.Background(), from, data)
			root.Send(self, &writeDone{res: res, task: t})
		}()
	}
}

func (g *roomGrain) onWriteDone(m *writeDone) {
	g.writing = false
	g.logWritten(m.res.err)
	if m.res.err != nil {
		g.log.Warn("write failed", "kind", m.task.kind, "error", m.res.err)
		m.task.done(fmt.Errorf("%w: %v", ErrLogUnavailable, m.res.err))
		g.pump()
		return
	}
	if err := g.applyRecords(m.res.records); err != nil {
		m.task.done(err)
		g.supersede()
		return
	}
	g.j.verified = m.res.last
	g.sinceSnap += len(m.res.records)
	g.dirty = true
	m.task.done(nil)
	g.publish(true)
	g.pump()
}

// applyRecords applies what was read back after a write, stopping at a
// newer activation's marker.
func (g *roomGrain) applyRecords(recs []persistence.Record) error {
	for _, r := range recs {
		if g.j.foreignMarker(r.Offset, r.Data) {
			return ErrSuperseded
		}
		e, err := room.DecodeEvent(r.Data)
		if err != nil {
			g.log.Error("skipping undecodable event", "offset", r.Offset, "error", err)
			continue
		}
		g.st.Apply(r.Offset, e)
	}
	return nil
}

// supersede stops serving at once: a newer activation owns the room.
func (g *roomGrain) supersede() {
	g.log.Warn("superseded by a newer activation; stopping", "epoch", g.j.epoch)
	g.stopped = true
	for _, t := range g.queue {
		t.done(ErrSuperseded)
	}
	g.queue = nil
	for _, w := range g.waiters {
		if w != nil {
			g.sys.Root.Send(w, errResponse(ErrSuperseded))
		}
	}
	g.waiters = nil
	g.poll.stop()
	g.draw.stop()
	g.failBatches(ErrSuperseded)
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
	if g.st.Live() && g.st.Issued != g.st.Checkpointed && now.Sub(g.checkpointAt) >= checkpointInterval && !g.writing {
		g.checkpointAt = now
		g.queue = append(g.queue, &task{kind: "checkpoint", decide: func(now int64) ([]room.Event, error) {
			return g.st.DecideCheckpoint(now, false), nil
		}, done: func(error) {}})
		g.pump()
	}
	if now.Sub(g.abandonAt) >= abandonInterval {
		g.abandonAt = now
		g.scanAbandoned(now.UnixNano())
	}
	if !g.snapshotting && g.sinceSnap > 0 && (g.sinceSnap >= snapshotEvery || now.Sub(g.snapshotAt) >= snapshotInterval) {
		g.saveSnapshot()
	}
	g.pollHealth(now)
	g.stats.record(&g.st.View, now, g.deps.Metrics)
	for k, s := range g.subs {
		if now.After(s.expires) {
			delete(g.subs, k)
		}
	}
	g.publish(false)
	g.period.Store(int64(g.tickPeriod(now)))
	g.restIfGone(now)
}

// seen records presence reports (a join is the first). Numbers never
// issued are ignored: a report must not make the memory grow for nobody.
func (g *roomGrain) seen(numbers []uint64, now int64) {
	if !g.st.Config.Abandon.Enabled {
		return
	}
	for _, n := range numbers {
		if n <= g.st.Issued {
			g.presence.Seen(n, now)
		}
	}
}

// scanAbandoned looks for silent numbers just ahead of the window. Most
// scans find nothing and write nothing; when one finds some, the write is
// queued and decides again against the state it finds then.
func (g *roomGrain) scanAbandoned(now int64) {
	if !g.st.Config.Abandon.Enabled {
		// Nobody reports presence while detection is off.
		g.presence.Forget(&g.st.View, now)
		return
	}
	if g.abandoning {
		return
	}
	evs, cursor := g.st.DecideAbandon(g.presence, now, abandonAhead)
	if len(evs) == 0 {
		g.presence.Examined(&g.st.View, cursor)
		return
	}
	g.abandoning = true
	g.queue = append(g.queue, &task{kind: "abandon", decide: func(now int64) ([]room.Event, error) {
		evs, cursor := g.st.DecideAbandon(g.presence, now, abandonAhead)
		if len(evs) == 0 {
			g.presence.Examined(&g.st.View, cursor)
		}
		return evs, nil
	}, done: func(err error) {
		g.abandoning = false
		if err == nil {
			g.presence.Examined(&g.st.View, g.st.AbandonScan)
		}
	}})
	g.pump()
}

func (g *roomGrain) saveSnapshot() {
	data, err := json.Marshal(g.st)
	if err != nil {
		g.log.Error("encode snapshot", "error", err)
		return
	}
	g.snapshotting, g.sinceSnap, g.snapshotAt = true, 0, g.now()
	l, stream, off, self, root, to := g.deps.Log, g.id, g.j.verified, g.self, g.sys.Root, g.deps.WriteTimeout
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
	if g.stopTick != nil {
		close(g.stopTick)
		g.stopTick = nil
	}
	g.poll.stop()
	g.draw.stop()
	g.stats.forget(g.deps.Metrics)
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
