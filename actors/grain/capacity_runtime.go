package grain

import (
	"errors"
	"time"

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
	offered := r.Settings.Validate() == nil
	if offered {
		if err := g.write(g.t.Offer(r.Settings, r.Host, r.Name, r.FileAt, now)); err != nil {
			ctx.Respond(errResponse(err))
			return
		}
	}
	g.t.Touch(r.IDs, now)
	g.pow.Arrived(r.Challenged)
	g.decidePow(now)
	if r.Report != nil {
		g.report(*r.Report, offered && g.t.FileDiffers(r.Settings), r.FileAt, now)
	}
	ctx.Respond(okResponse(protocol.CapacityTouchAnswer{Pow: g.t.PowBits(), Settings: g.t.Settings, Version: g.t.Runtime.Version,
		Paused: g.t.Runtime.Paused, Open: g.t.Runtime.Open, Figures: g.t.Figures(now)}))
}

// report keeps a node's report, marked when its file gives the room
// other settings than it holds: counted with every batch, logged when a
// node starts or stops disagreeing.
func (g *capacityGrain) report(rep capacity.NodeReport, differs bool, fileAt, now int64) {
	rep.FileDiffers = differs
	if differs && g.deps.Metrics != nil {
		g.deps.Metrics.FileDisagreements.Inc()
	}
	if prev, ok := g.nodes.Get(rep.Node); differs && !prev.FileDiffers {
		g.log.Warn("a proxy node runs another file for this capacity room; the settings of the newest file stay in force",
			"node", rep.Node, "fileModified", fileTime(fileAt), "roomFileModified", fileTime(g.t.FileAt))
	} else if ok && prev.FileDiffers && !differs {
		g.log.Info("the proxy node's file agrees with the room again", "node", rep.Node)
	}
	g.nodes.Report(rep, now)
}

// fileTime is a file's modification time for the log ("" unknown).
func fileTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
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
