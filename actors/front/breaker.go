package front

import (
	"sync"
	"time"
)

// breaker is a front node's circuit breaker for joins, per room. When a
// room's grain answers CodeLogUnavailable, the room's circuit opens: joins
// into it are answered ErrLogUnavailable on this front without a cluster
// call for the cool-down. Then one batch goes through as a probe (the grain
// starts a reservation for it, which tests the log); while the probe is on
// its way the others still fail at once. A probe that succeeds closes the
// circuit; one that fails opens it again, for twice the cool-down up to
// breakerMaxCool. Only log_unavailable opens it: other errors say nothing
// about the log.
type breaker struct {
	now func() time.Time

	mu sync.Mutex
	// mu guards rooms.
	rooms map[string]*circuit
}

type circuit struct {
	openUntil time.Time
	cool      time.Duration
	probing   bool
}

const (
	breakerCool    = 200 * time.Millisecond
	breakerMaxCool = 2 * time.Second
)

func newBreaker(now func() time.Time) *breaker {
	return &breaker{now: now, rooms: map[string]*circuit{}}
}

// allow reports whether a batch for room id may be sent now. A true answer
// while the circuit is open makes that batch the probe: its outcome must be
// reported with done.
func (b *breaker) allow(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.rooms[id]
	if c == nil {
		return true
	}
	if c.probing || b.now().Before(c.openUntil) {
		return false
	}
	c.probing = true
	return true
}

// done records the outcome of a batch sent after allow: logDown is true
// when the grain answered CodeLogUnavailable.
func (b *breaker) done(id string, logDown bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.rooms[id]
	if !logDown {
		delete(b.rooms, id)
		return
	}
	if c == nil {
		c = &circuit{cool: breakerCool}
		b.rooms[id] = c
	} else if c.probing {
		c.cool = min(2*c.cool, breakerMaxCool)
	}
	c.probing = false
	c.openUntil = b.now().Add(c.cool)
}

// open reports whether room id's circuit is open (for tests and metrics).
func (b *breaker) open(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rooms[id] != nil
}
