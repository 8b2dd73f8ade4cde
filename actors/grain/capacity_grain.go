package grain

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// capacityGrain holds one capacity room. Its writes (arrivals, admissions,
// releases, expiries) are appended synchronously, like the directory's:
// renewals, the frequent part, are not written at all.
type capacityGrain struct {
	deps  *Deps
	id    string
	log   *slog.Logger
	t     *capacity.Table
	j     journal
	ready bool
	dead  bool
	// failed is why the last activation failed.
	failed error
	since  int
	pow    capacity.PowCounter
	// nodes are the proxy nodes reporting the room (soft state).
	nodes capacity.Nodes
}

func newCapacityGrain(d *Deps) actor.Actor { return &capacityGrain{deps: d} }

// Receive routes each request to the table.
func (g *capacityGrain) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *cluster.ClusterInit:
		g.id = m.Identity.Identity
		g.log = g.deps.Logger.With("capacity", g.id)
		g.activate()
	case *wire.Request:
		g.handle(ctx, m)
	case *actor.Stopping:
		if g.ready && g.since > 0 {
			g.snapshot()
		}
	}
}

func (g *capacityGrain) activate() {
	t := capacity.New()
	g.j = journal{log: g.deps.Log, stream: g.id, timeout: 4 * g.deps.WriteTimeout}
	err := g.j.recover(context.Background(), func(b []byte) error { return json.Unmarshal(b, t) },
		func(off int64, data []byte) error {
			e, err := capacity.DecodeEvent(data)
			if err != nil {
				g.log.Error("skipping undecodable event", "offset", off, "error", err)
				return nil
			}
			t.Apply(off, e)
			return nil
		})
	g.failed = err
	if err != nil {
		g.log.Warn("capacity room activation failed", "error", err)
		return
	}
	t.Recovered(g.deps.Now().UnixNano())
	g.t, g.ready = t, true
	g.snapshot() // covers the tail just read and this activation's marker
}

func (g *capacityGrain) handle(ctx actor.Context, req *wire.Request) {
	if g.dead {
		ctx.Respond(errResponse(protocol.ErrSuperseded))
		return
	}
	if !g.ready {
		g.activate()
		if !g.ready {
			ctx.Respond(notActivated(g.failed))
			return
		}
	}
	var r protocol.CapacityRequest
	if !decode(ctx, req, &r) {
		return
	}
	now := g.deps.Now().UnixNano()
	switch req.Op {
	case protocol.OpCapCheck:
		g.answerCheck(ctx, r, now)
	case protocol.OpCapRelease:
		if err := g.write(g.t.Release(r.ID, now)); err != nil {
			ctx.Respond(errResponse(err))
			return
		}
		ctx.Respond(okResponse(struct{}{}))
	case protocol.OpCapKey:
		g.answerKey(ctx, now)
	default:
		if !g.handleRuntime(ctx, req.Op, r, now) {
			ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "unknown operation " + req.Op})
		}
	}
}

// answerCheck answers a visitor's check: the room's settings and the
// visitor's events written, the proof of work judged, then the status.
func (g *capacityGrain) answerCheck(ctx actor.Context, r protocol.CapacityRequest, now int64) {
	if err := r.Settings.Validate(); err != nil {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: err.Error()})
		return
	}
	if r.ID == "" {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "visitor id missing"})
		return
	}
	if err := g.write(g.t.Offer(r.Settings, r.Host, r.Name, 0, now)); err != nil {
		ctx.Respond(errResponse(err))
		return
	}
	if err := g.write(g.check(r, now)); err != nil {
		ctx.Respond(errResponse(err))
		return
	}
	if r.First {
		g.pow.Arrived(1)
	}
	g.decidePow(now)
	st := g.t.Status(r.ID)
	if r.First && !st.Admitted && st.Position == 0 {
		st = g.t.Estimate()
		st.Arrived = now
		g.t.Provisional(now)
	}
	ctx.Respond(okResponse(st))
}

// answerKey answers the room's sealed cookie key, drawn and written on
// the first ask.
func (g *capacityGrain) answerKey(ctx actor.Context, now int64) {
	if g.t.KeySealed == nil {
		sealed := g.deps.Sealer.Seal(protocol.RandomBytes(32), protocol.CapacityKeyAD(g.id))
		if err := g.write([]capacity.Event{{Type: capacity.TypeKeyed, At: now, KeySealed: sealed}}); err != nil {
			ctx.Respond(errResponse(err))
			return
		}
	}
	ctx.Respond(okResponse(g.t.KeySealed))
}

// check is the events of a visitor's check: a first request, a return
// with a provisional place, or any other.
func (g *capacityGrain) check(r protocol.CapacityRequest, now int64) []capacity.Event {
	switch {
	case r.First:
		return g.t.Arrive(r.ID, now)
	case r.Arrived > 0:
		return g.t.Confirm(r.ID, r.Arrived, now)
	}
	return g.t.Check(r.ID, now)
}

// decidePow writes the automatic proof of work's change, if any. A change
// that cannot be written is decided again at the next request.
func (g *capacityGrain) decidePow(now int64) {
	evs := g.pow.Decide(g.t, now)
	if len(evs) == 0 {
		return
	}
	if err := g.write(evs); err != nil {
		g.log.Warn("automatic proof of work change not written", "error", err, "reason", evs[0].Reason)
		return
	}
	g.log.Info("automatic proof of work", "bits", g.t.PowBits(), "reason", evs[0].Reason)
}

// write appends evs, reads the stream back (fencing) and applies what it
// read. Nothing is applied unless the append is verified.
func (g *capacityGrain) write(evs []capacity.Event) error {
	if len(evs) == 0 {
		return nil
	}
	data := make([][]byte, 0, len(evs))
	for i := range evs {
		evs[i].Epoch = g.j.epoch
		b, err := evs[i].Encode()
		if err != nil {
			return err
		}
		data = append(data, b)
	}
	res := g.j.write(context.Background(), g.j.verified, data)
	if res.err != nil {
		g.log.Warn("capacity write failed", "error", res.err)
		return persistence.ErrUnavailable
	}
	for _, r := range res.records {
		if g.j.foreignMarker(r.Offset, r.Data) {
			g.dead = true
			return protocol.ErrSuperseded
		}
		if e, err := capacity.DecodeEvent(r.Data); err == nil {
			g.t.Apply(r.Offset, e)
		}
	}
	g.j.verified = res.last
	if g.since += len(res.records); g.since >= 500 {
		g.since = 0
		g.snapshot()
	}
	return nil
}

func (g *capacityGrain) snapshot() {
	if err := g.j.saveSnapshot(g.t, 0); err != nil {
		g.log.Warn("capacity snapshot failed", "error", err)
	}
}
