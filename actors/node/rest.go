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

// A live room that nobody has asked anything for quietAfter (no visitor,
// no front syncing it, no dashboard, no operator) ticks once a second
// instead of ten times: nobody is there to see a figure move sooner. It
// goes back to ten at its next request, whose tick comes at once.
const (
	quietAfter = time.Minute
	quietTick  = time.Second
)

// tickPeriod is how long the ticker waits for the next tick.
func (g *roomGrain) tickPeriod(now time.Time) time.Duration {
	if time.Since(g.heardAt) < quietAfter || g.busy() || g.dirty {
		return tickInterval
	}
	if due, ok := g.st.OpeningDue(); ok && due.Sub(now) < 2*quietTick {
		return tickInterval
	}
	return quietTick
}

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

// wake restarts the ticker of a resting room, and brings the next tick of
// a quiet one at once; called on every request.
func (g *roomGrain) wake() {
	g.lastRequest, g.heardAt = g.now(), time.Now()
	switch {
	case g.resting:
		g.resting = false
		g.startTicker()
	case g.kick != nil && time.Duration(g.period.Load()) > tickInterval:
		g.period.Store(int64(tickInterval))
		select {
		case g.kick <- struct{}{}:
		default:
		}
	}
}

// busy reports whether anything is in flight or waiting.
func (g *roomGrain) busy() bool {
	return g.writes.busy() || g.snapshotting || g.reserving || g.abandoning ||
		len(g.desk.waiting) > 0
}
