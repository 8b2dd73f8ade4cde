package grain

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// The grain's half of batched joins (the front's half is batcher.go).
//
// A front node sends one JoinBatchRequest for all the joins of a room it
// gathered; the grain issues that many consecutive numbers from its
// reserved block in one step of its Receive, so a batch is never split
// around another front's numbers, and answers the first number with the
// line and the issued count — the whole view only when the front's copy is
// older. Every number handed out lies inside a reservation the log has
// already acknowledged (invariant 1): when the block holds fewer numbers
// than the batch asks, the batch waits for the next reservation, sized to
// hold it, and batches are served in the order they arrived.
//
// The log's health decides how a batch that must wait is answered. While
// writes fail, or a reservation has been on its way for longer than
// blockWait, the log is taken to be down: waiting batches and new batches
// that need a block are answered CodeLogUnavailable at once (numbers still
// in the current block are handed out: they are durable already), and each
// such batch starts a new reservation when none is on its way, which probes
// the log. The first write that succeeds brings joins back.

const (
	// maxBatch bounds one batch; a front never sends more (actors/front, batcher.go).
	maxBatch = 4096
	// blockWait is how long a batch may wait for a reservation before the
	// log counts as down.
	blockWait = 500 * time.Millisecond
	// firstBlockWait is blockWait until the activation's first reservation
	// has been written. The activation has just written and read back its
	// marker, so the log is up; its first reservation can still take
	// longer on a member that has just started (its connections to the
	// log are new), as every member does in a roll, and a room moving to
	// it must not refuse joins meanwhile.
	firstBlockWait = 2 * time.Second
)

// batchWaiter is a batch waiting for a reservation.
type batchWaiter struct {
	to    *actor.PID
	req   protocol.JoinBatchRequest
	since time.Time
}

// joinDesk is the grain's state of batched joins, used only from Receive.
type joinDesk struct {
	waiting []batchWaiter
	// pending is the sum of the waiting batches' counts: the next
	// reservation holds at least that many numbers.
	pending uint64
	// logDown is set when a write failed or a reservation took longer than
	// blockWait, and cleared by the next write that succeeds.
	logDown bool
	// reserved is set once a reservation of this activation succeeded.
	reserved bool
}

// joinBatch serves one batch request.
func (g *roomGrain) joinBatch(c *opCall, r *protocol.JoinBatchRequest) {
	if r.Count == 0 || r.Count > maxBatch {
		c.respond(&wire.Response{Code: protocol.CodeInvalid, Message: "a batch asks for 1 to 4096 numbers"})
		return
	}
	w := batchWaiter{to: c.ctx.Sender(), req: *r, since: g.now()}
	// Batches are served in arrival order: none overtakes one that waits.
	if len(g.desk.waiting) == 0 && g.grantBatch(w) {
		return
	}
	if g.desk.logDown {
		c.respond(errResponse(protocol.ErrLogUnavailable))
		g.reserve() // a probe, unless one is on its way
		return
	}
	if g.desk.pending+r.Count > maxWaiters {
		c.respond(errResponse(persistence.ErrUnavailable))
		return
	}
	g.desk.waiting = append(g.desk.waiting, w)
	g.desk.pending += r.Count
	g.reserve()
}

// grantBatch issues w's numbers and answers it; false when the block holds
// too few and w must wait.
func (g *roomGrain) grantBatch(w batchWaiter) bool {
	now := g.now().UnixNano()
	first, err := g.st.JoinBatch(w.req.Count, now)
	if err == room.ErrNeedBlock {
		return false
	}
	if err != nil {
		g.answerBatch(w.to, errResponse(err))
		return true
	}
	g.blocks.issued(w.req.Count)
	g.dirty = true
	if g.st.Config.Abandon.Enabled {
		for n := first; n < first+w.req.Count; n++ {
			if c, ok := g.st.PlaceOf(n); ok {
				g.presence.Seen(c, now)
			}
		}
	}
	if g.deps.Metrics != nil {
		g.deps.Metrics.Joins.Add(float64(w.req.Count))
	}
	v := &g.st.View
	res := protocol.JoinBatchResult{First: first, Count: w.req.Count, Epoch: v.Epoch, Version: v.Version, Line: v.Line, Issued: v.Issued}
	if !w.req.Known || w.req.Epoch != v.Epoch || w.req.Version != v.Version {
		res.View = v
	}
	body, err := res.MarshalJSON()
	if err != nil {
		g.answerBatch(w.to, errResponse(err))
		return true
	}
	g.answerBatch(w.to, &wire.Response{Body: body})
	if g.st.Reserved-g.st.Issued < g.blocks.low() {
		g.reserve()
	}
	return true
}

func (g *roomGrain) answerBatch(to *actor.PID, r *wire.Response) {
	if to != nil {
		g.sys.Root.Send(to, r)
	}
}

// grantBatches serves the waiting batches after a reservation ended: in
// order, as far as the new block reaches; err is the reservation's outcome.
// A reservation that found a newer activation in the log says nothing
// about the log: its batches are answered ErrSuperseded, which the front
// retries on the room's new activation (a room moving to another member,
// as in a roll), not log_unavailable, which it hands to the visitors.
func (g *roomGrain) grantBatches(err error) {
	switch {
	case errors.Is(err, protocol.ErrSuperseded):
		g.failBatches(protocol.ErrSuperseded)
		return
	case err != nil:
		g.failBatches(protocol.ErrLogUnavailable)
		return
	}
	g.desk.reserved = true
	for len(g.desk.waiting) > 0 {
		w := g.desk.waiting[0]
		if !g.grantBatch(w) {
			g.reserve()
			return
		}
		g.desk.waiting = g.desk.waiting[1:]
		g.desk.pending -= w.req.Count
	}
}

// failBatches answers every waiting batch with err.
func (g *roomGrain) failBatches(err error) {
	for _, w := range g.desk.waiting {
		g.answerBatch(w.to, errResponse(err))
	}
	g.desk.waiting, g.desk.pending = nil, 0
}

// logWritten records a write's outcome for the log's health.
func (g *roomGrain) logWritten(err error) {
	if err != nil {
		if !g.desk.logDown {
			g.log.Warn("log writes fail: joins answer log_unavailable until a write succeeds", "error", err)
		}
		g.desk.logDown = true
		return
	}
	if g.desk.logDown {
		g.log.Info("log writes succeed again: joins resume")
	}
	g.desk.logDown = false
}

// checkBlockWait takes the log for down when the oldest batch has waited
// longer than blockWait (firstBlockWait before the activation's first
// reservation) for its reservation; called on every tick.
func (g *roomGrain) checkBlockWait(now time.Time) {
	limit := blockWait
	if !g.desk.reserved {
		limit = firstBlockWait
	}
	if len(g.desk.waiting) == 0 || now.Sub(g.desk.waiting[0].since) < limit {
		return
	}
	if !g.desk.logDown {
		g.log.Warn("a reservation takes longer than expected: joins answer log_unavailable until a write succeeds", "waited", now.Sub(g.desk.waiting[0].since))
	}
	g.desk.logDown = true
	g.failBatches(protocol.ErrLogUnavailable)
}
