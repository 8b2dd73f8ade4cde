package grain

import (
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// registryGrain keeps every node's latest self-report. It is a singleton
// (identity RegistryID) placed on a member like any grain, and every node,
// member or front, sends it its report through the cluster client every
// ReportInterval.
//
// A grain rather than pub/sub: fronts already reach grains through the
// client with its retries and fail-over, the list is wanted by whichever
// node answers the instances endpoint (any node), and the report set is
// small (one entry per node). The list is soft state, never in the log: a
// member that takes the registry over after a fail-over knows every live
// node again one ReportInterval later.
type registryGrain struct {
	deps  *Deps
	nodes map[string]*protocol.Instance
}

func newRegistryGrain(d *Deps) actor.Actor {
	return &registryGrain{deps: d, nodes: map[string]*protocol.Instance{}}
}

// Receive answers reports, leaves and reads; all state lives here.
func (g *registryGrain) Receive(ctx actor.Context) {
	req, ok := ctx.Message().(*wire.Request)
	if !ok {
		return
	}
	now := g.deps.Now()
	switch req.Op {
	case protocol.OpReport:
		var in protocol.Instance
		if !decode(ctx, req, &in) {
			return
		}
		if in.ID == "" {
			ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "a report needs the node id"})
			return
		}
		in.ReportedAt = now.UTC()
		if in.Features == nil {
			in.Features = []string{} // a release before 0.5.0 announces none
		}
		g.nodes[in.ID] = &in
		ctx.Respond(okResponse(struct{}{}))
	case protocol.OpLeave:
		var in protocol.Instance
		if !decode(ctx, req, &in) {
			return
		}
		delete(g.nodes, in.ID)
		ctx.Respond(okResponse(struct{}{}))
	case protocol.OpInstances:
		ctx.Respond(okResponse(g.list(now)))
	default:
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "unknown operation " + req.Op})
	}
}

// list drops stale reports and returns the rest sorted by id.
func (g *registryGrain) list(now time.Time) []protocol.Instance {
	out := make([]protocol.Instance, 0, len(g.nodes))
	for id, in := range g.nodes {
		if now.Sub(in.ReportedAt) > protocol.InstanceTTL {
			delete(g.nodes, id)
			continue
		}
		out = append(out, *in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
