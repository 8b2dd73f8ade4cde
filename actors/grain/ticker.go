package grain

import (
	"sync/atomic"
	"time"
)

// ticker sends the room grain its ticks: one every period, and one at once
// after a kick. run is its loop, on a goroutine of its own; everything else
// is called from the grain's Receive. The methods of a nil ticker (a
// resting grain's) do nothing.
type ticker struct {
	stop   chan struct{}
	kick   chan struct{}
	period atomic.Int64
}

func newTicker(period time.Duration) *ticker {
	t := &ticker{stop: make(chan struct{}), kick: make(chan struct{}, 1)}
	t.period.Store(int64(period))
	return t
}

// run calls tick every period, and at once after a kick, until halted.
func (t *ticker) run(tick func()) {
	timer := time.NewTimer(time.Duration(t.period.Load()))
	defer timer.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-t.kick:
			// Since Go 1.23 a stopped timer's channel holds no stale
			// value, and Reset below starts it afresh.
			timer.Stop()
		case <-timer.C:
		}
		tick()
		timer.Reset(time.Duration(t.period.Load()))
	}
}

// setPeriod sets the wait for the tick after the next.
func (t *ticker) setPeriod(d time.Duration) {
	if t != nil {
		t.period.Store(int64(d))
	}
}

// hurry brings the next tick at once when the period is longer than d, and
// sets the period to d.
func (t *ticker) hurry(d time.Duration) {
	if t == nil || time.Duration(t.period.Load()) <= d {
		return
	}
	t.period.Store(int64(d))
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// halt ends run.
func (t *ticker) halt() {
	if t != nil {
		close(t.stop)
	}
}

// A live room that nobody has asked anything for quietAfter (no visitor,
// no front syncing it, no dashboard, no operator) ticks once a second
// instead of ten times: nobody is there to see a figure move sooner. It
// goes back to ten at its next request, whose tick comes at once.
//
// A room that is gone (deleted, or never created) has nothing to tick for:
// no line moves, nothing is written, nobody is shown a figure. Its grain
// kept ticking ten times a second all the same, and every room a bench run
// or an operator deleted went on costing the member CPU (about a
// millisecond a second each: a member that had seen a hundred test rooms
// spent a fifth of a CPU on them). Once such a room has had no request for
// RestAfter and has nothing in flight, its grain rests: the ticker stops
// and the room's gauges go. The next request wakes it.
const (
	quietAfter = time.Minute
	quietTick  = time.Second
	// RestAfter is how long a gone room keeps ticking after its last
	// request, long enough for every front to have taken the deletion from
	// its view.
	RestAfter = time.Minute
)

// pace is the grain's rhythm: when it last heard a request, and whether it
// rests.
type pace struct {
	// lastRequest is in the grain's clock, heardAt in real time.
	lastRequest time.Time
	heardAt     time.Time
	resting     bool
}

// heard records a request at now (the grain's clock) and wall (time.Now).
func (p *pace) heard(now, wall time.Time) { p.lastRequest, p.heardAt = now, wall }

// period is how long to wait for the next tick, at real time wall and
// grain time now: active is whether anything is in flight or to publish,
// opening when the room's armed opening is due (zero when none is).
func (p *pace) period(wall, now time.Time, active bool, opening time.Time) time.Duration {
	if wall.Sub(p.heardAt) < quietAfter || active {
		return tickInterval
	}
	if !opening.IsZero() && opening.Sub(now) < 2*quietTick {
		return tickInterval
	}
	return quietTick
}

// restDue reports whether a room that is not live and has nothing in
// flight (busy false) has been left alone long enough to rest, at now.
func (p *pace) restDue(now time.Time, live, busy bool) bool {
	return !p.resting && !live && !busy && now.Sub(p.lastRequest) >= RestAfter
}
