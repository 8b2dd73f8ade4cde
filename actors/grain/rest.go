package grain

import "time"

// The room grain's ticking and resting (ticker.go has the rules).

// startTicker runs the grain's ticker: a tick every tickInterval, or every
// quietTick while the room is quiet; a kick brings the next tick at once.
func (g *roomGrain) startTicker() {
	t := newTicker(tickInterval)
	g.ticker = t
	self, root := g.self, g.sys.Root
	go func() {
		t.run(func() { root.Send(self, &tick{}) })
	}()
}

// stopTicker ends the ticker, if one runs.
func (g *roomGrain) stopTicker() {
	g.ticker.halt()
	g.ticker = nil
}

// tickPeriod is how long the ticker waits for the next tick.
func (g *roomGrain) tickPeriod(now time.Time) time.Duration {
	return g.pace.period(time.Now(), now, g.busy() || g.dirty, g.nextDue(now))
}

// restIfGone stops the ticker of a gone room that has been left alone;
// called on every tick.
func (g *roomGrain) restIfGone(now time.Time) {
	if !g.pace.restDue(now, g.st.Live(), g.busy()) {
		return
	}
	g.stopTicker()
	g.poll.stop()
	g.stats.forget(g.deps.Metrics)
	g.pace.resting = true
	g.log.Debug("room is gone and left alone: resting until the next request")
}

// wake restarts the ticker of a resting room, and brings the next tick of
// a quiet one at once; called on every request.
func (g *roomGrain) wake() {
	g.pace.heard(g.now(), time.Now())
	if g.pace.resting {
		g.pace.resting = false
		g.startTicker()
		return
	}
	g.ticker.hurry(tickInterval)
}

// busy reports whether anything is in flight or waiting.
func (g *roomGrain) busy() bool {
	return g.writes.busy() || g.snapshotting || g.reserving || g.abandoning ||
		len(g.desk.waiting) > 0
}
