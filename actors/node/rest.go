package node

import "time"

// A room that is gone (deleted, or never created) has nothing to tick for:
// no line moves, nothing is written, nobody is shown a figure. Its grain
// kept ticking ten times a second all the same, and every room a bench run
// or an operator deleted went on costing the member CPU (about a
// millisecond a second each: a member that had seen a hundred test rooms
// spent a fifth of a CPU on them). Once such a room has had no request for
// restAfter and has nothing in flight, its grain rests: the ticker stops
// and the room's gauges go. The next request wakes it.

// restAfter is how long a gone room keeps ticking after its last request,
// long enough for every front to have taken the deletion from its view.
const restAfter = time.Minute

// restIfGone stops the ticker of a gone room that has been left alone;
// called on every tick.
func (g *roomGrain) restIfGone(now time.Time) {
	if g.st.Live() || now.Sub(g.lastRequest) < restAfter || g.busy() {
		return
	}
	if g.stopTick != nil {
		close(g.stopTick)
		g.stopTick = nil
	}
	g.poll.stop()
	g.stats.forget(g.deps.Metrics)
	g.resting = true
	g.log.Debug("room is gone and left alone: resting until the next request")
}

// wake restarts the ticker of a resting room; called on every request.
func (g *roomGrain) wake() {
	g.lastRequest = g.now()
	if g.resting {
		g.resting = false
		g.startTicker()
	}
}

// busy reports whether anything is in flight or waiting.
func (g *roomGrain) busy() bool {
	return g.writing || len(g.queue) > 0 || g.snapshotting || g.reserving || g.abandoning ||
		len(g.waiters) > 0 || len(g.desk.waiting) > 0
}
