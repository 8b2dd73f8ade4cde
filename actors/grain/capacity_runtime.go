package grain

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// handleRuntime answers the capacity grain's operations for the proxies'
// batches, the console and the admin API; it reports whether op was one
// of them.
func (g *capacityGrain) handleRuntime(ctx actor.Context, op string, r protocol.CapacityRequest, now int64) bool {
	switch op {
	case protocol.OpCapTouch:
		g.answerTouch(ctx, r, now)
	case protocol.OpCapState:
		ctx.Respond(okResponse(g.state(now)))
	case protocol.OpCapAdjust:
		g.answerAdjust(ctx, r, now)
	default:
		return false
	}
	return true
}

// answerTouch renews a batch, records the node's report and the file's
// settings it runs with, and answers what the node enforces.
func (g *capacityGrain) answerTouch(ctx actor.Context, r protocol.CapacityRequest, now int64) {
	if r.Settings.Validate() == nil {
		if err := g.write(g.t.Configure(r.Settings, r.Host, r.Name, now)); err != nil {
			ctx.Respond(errResponse(err))
			return
		}
	}
	g.t.Touch(r.IDs, now)
	g.pow.Arrived(r.Challenged)
	g.decidePow(now)
	if r.Report != nil {
		g.nodes.Report(*r.Report, now)
	}
	ctx.Respond(okResponse(protocol.CapacityTouchAnswer{Pow: g.t.PowBits(), Settings: g.t.Settings, Version: g.t.Runtime.Version,
		Paused: g.t.Runtime.Paused, Open: g.t.Runtime.Open, Figures: g.t.Figures(now)}))
}

func (g *capacityGrain) state(now int64) protocol.CapacityState {
	st := protocol.CapacityState{ID: g.id, Host: g.t.Host, Name: g.t.Name, Settings: g.t.Settings, File: g.t.File, Runtime: g.t.Runtime,
		Differs: g.t.Differs(), Figures: g.t.Figures(now), Nodes: g.nodes.List(now), Audit: g.t.Audit}
	if st.Differs == nil {
		st.Differs = []string{}
	}
	if st.Audit == nil {
		st.Audit = []capacity.AuditEntry{}
	}
	for _, n := range st.Nodes {
		st.Refusals += n.Refusals
	}
	return st
}

// answerAdjust writes an operator's change, checked against the version
// in force, and answers the state after it.
func (g *capacityGrain) answerAdjust(ctx actor.Context, r protocol.CapacityRequest, now int64) {
	if r.Adjust == nil {
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "no change given"})
		return
	}
	evs, err := g.t.DecideAdjust(*r.Adjust, r.Actor, now)
	var inv *capacity.InvalidError
	switch {
	case errors.As(err, &inv):
		ctx.Respond(errResponse(&protocol.Error{Code: protocol.CodeInvalid, Message: inv.Message, Field: inv.Field}))
		return
	case errors.Is(err, capacity.ErrStale):
		ctx.Respond(errResponse(&protocol.Error{Code: protocol.CodeConflict, Message: "The room was changed since it was read: read it again, then save."}))
		return
	case errors.Is(err, capacity.ErrTooManyAdjustments):
		ctx.Respond(errResponse(&protocol.Error{Code: protocol.CodeRateLimited, Message: err.Error()}))
		return
	}
	if err := g.write(evs); err != nil {
		ctx.Respond(errResponse(err))
		return
	}
	if len(evs) > 0 {
		g.log.Info("capacity room adjusted", "actor", r.Actor, "version", g.t.Runtime.Version, "differs", g.t.Differs())
	}
	ctx.Respond(okResponse(g.state(now)))
}
