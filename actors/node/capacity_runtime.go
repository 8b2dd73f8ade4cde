package node

import (
	"context"
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// Operations of the capacity grain for the console and the admin API: its
// state, and an operator's change of its runtime settings.
const (
	opCapState  = "cap-state"
	opCapAdjust = "cap-adjust"
)

// CapacityState is a capacity room as the console shows it.
type CapacityState struct {
	ID   string `json:"id"`
	Host string `json:"host"`
	Name string `json:"name"`
	// Settings are in force; File what the proxies' HCL file says;
	// Runtime what an operator changed over it, and Differs the settings
	// that differ from the file because of it.
	Settings capacity.Settings `json:"settings"`
	File     capacity.Settings `json:"file"`
	Runtime  capacity.Runtime  `json:"runtime"`
	Differs  []string          `json:"differs"`
	capacity.Figures
	// Refusals sums the address-budget refusals the nodes reported.
	Refusals uint64                `json:"refusals"`
	Nodes    []capacity.NodeReport `json:"nodes"`
	Audit    []capacity.AuditEntry `json:"audit"`
}

// CapacityTouchAnswer is the answer to a renewal batch: what the proxy
// node enforces itself, learnt about once a second.
type CapacityTouchAnswer struct {
	// Pow is the proof of work new arrivals must solve now, in bits.
	Pow int `json:"pow,omitempty"`
	// Settings are in force (the file's with the runtime's changes), and
	// Version the runtime version they come from.
	Settings capacity.Settings `json:"settings"`
	Version  int64             `json:"version,omitempty"`
	Paused   bool              `json:"paused,omitempty"`
	Open     bool              `json:"open,omitempty"`
	// Figures are the room's gauges, for the node's /metrics.
	Figures capacity.Figures `json:"figures"`
}

// handleRuntime answers the operations of this file; it reports whether
// op was one of them.
func (g *capacityGrain) handleRuntime(ctx actor.Context, op string, r CapacityRequest, now int64) bool {
	switch op {
	case opCapTouch:
		g.answerTouch(ctx, r, now)
	case opCapState:
		ctx.Respond(okResponse(g.state(now)))
	case opCapAdjust:
		g.answerAdjust(ctx, r, now)
	default:
		return false
	}
	return true
}

// answerTouch renews a batch, records the node's report and the file's
// settings it runs with, and answers what the node enforces.
func (g *capacityGrain) answerTouch(ctx actor.Context, r CapacityRequest, now int64) {
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
	ctx.Respond(okResponse(CapacityTouchAnswer{Pow: g.t.PowBits(), Settings: g.t.Settings, Version: g.t.Runtime.Version,
		Paused: g.t.Runtime.Paused, Open: g.t.Runtime.Open, Figures: g.t.Figures(now)}))
}

func (g *capacityGrain) state(now int64) CapacityState {
	st := CapacityState{ID: g.id, Host: g.t.Host, Name: g.t.Name, Settings: g.t.Settings, File: g.t.File, Runtime: g.t.Runtime,
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
func (g *capacityGrain) answerAdjust(ctx actor.Context, r CapacityRequest, now int64) {
	if r.Adjust == nil {
		ctx.Respond(&wire.Response{Code: CodeInvalid, Message: "no change given"})
		return
	}
	evs, err := g.t.DecideAdjust(*r.Adjust, r.Actor, now)
	var inv *capacity.InvalidError
	switch {
	case errors.As(err, &inv):
		ctx.Respond(errResponse(&Error{Code: CodeInvalid, Message: inv.Message, Field: inv.Field}))
		return
	case errors.Is(err, capacity.ErrStale):
		ctx.Respond(errResponse(&Error{Code: CodeConflict, Message: "The room was changed since it was read: read it again, then save."}))
		return
	case errors.Is(err, capacity.ErrTooManyAdjustments):
		ctx.Respond(errResponse(&Error{Code: CodeRateLimited, Message: err.Error()}))
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

// CapacityTouch renews the slots of visitors seen active (one batch),
// reports the first requests answered with a challenge since the last
// batch and this node's report, and tells the room the file's settings
// this node runs it with. The answer is what the node enforces now.
func (c *Client) CapacityTouch(ctx context.Context, id string, t CapacityTouch) (CapacityTouchAnswer, error) {
	var a CapacityTouchAnswer
	err := c.call(ctx, id, KindCapacity, opCapTouch, CapacityRequest{IDs: t.Visitors, Challenged: t.Challenged,
		Settings: t.Settings, Host: t.Host, Name: t.Name, Report: t.Report}, &a)
	return a, err
}

// CapacityTouch is one renewal batch of a proxy node.
type CapacityTouch struct {
	Visitors   []string
	Challenged uint64
	// Settings, Host and Name are the room as the node's file has it.
	Settings   capacity.Settings
	Host, Name string
	Report     *capacity.NodeReport
}

// CapacityState reads capacity room id's state.
func (c *Client) CapacityState(ctx context.Context, id string) (CapacityState, error) {
	var st CapacityState
	err := c.call(ctx, id, KindCapacity, opCapState, CapacityRequest{}, &st)
	return st, err
}

// CapacityAdjust changes capacity room id's runtime settings as actor
// (checked against a.Version) and returns the state after the change.
func (c *Client) CapacityAdjust(ctx context.Context, id string, a capacity.Adjust, actor string) (CapacityState, error) {
	var st CapacityState
	err := c.call(ctx, id, KindCapacity, opCapAdjust, CapacityRequest{Adjust: &a, Actor: actor}, &st)
	return st, err
}
