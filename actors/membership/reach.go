package membership

import (
	"sync"
	"time"
)

// A front must never hang for want of members. When no member of the
// cluster answers (all of them stopped, or this node cut off from them),
// every grain call would wait out its timeout: protoactor keeps the last
// member list (the provider publishes none while no health check answers)
// and sends requests to members that are gone. ReachWatch follows whether
// any member can be reached, and calls fail at once with
// ErrClusterUnavailable while none can; calls already waiting end as soon
// as that is known. Once a member answers again, it is used at once: the
// provider publishes the new member list (a restarted member comes back
// under a new identity) and the watch sees the provider healthy.
//
// "No member reachable" is either of: no member in the list (a front
// before its first list), or the provider's health error, which it sets
// when a whole round of health checks got no answer at all and clears on
// the first round with one.

// ReachWatch knows whether any cluster member can be reached.
type ReachWatch struct {
	// health is the provider's health: an error while no member answers.
	// It blocks for up to a round of health checks.
	health func() error
	// count is the number of members in the current list; known is false
	// until the first list has arrived.
	count func() (n int, known bool)
	stopper

	mu sync.Mutex
	// mu guards the fields below.
	healthy bool
	// lost is closed while no member is reachable; a fresh open channel
	// while some are.
	lost chan struct{}
	down bool
}

func NewReachWatch(health func() error, count func() (int, bool)) *ReachWatch {
	return &ReachWatch{health: health, count: count, stopper: stopper{stop: make(chan struct{})},
		healthy: true, lost: make(chan struct{})}
}

// Start polls the provider's health until close.
func (w *ReachWatch) Start() {
	w.wg.Add(1)
	go w.run()
}

func (w *ReachWatch) run() {
	defer w.wg.Done()
	t := time.NewTicker(reachPoll)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case err := <-askAsync(w.health):
			w.onHealth(err)
		}
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// reachPoll is the pause between two questions to the provider; each
// question itself waits for the provider's current round to end.
const reachPoll = 50 * time.Millisecond

// askAsync runs f on a goroutine of its own and hands its answer over: the
// provider holds the lock of its health for a whole round of checks (up to
// its 2 s timeout plus one TTL), and a stop must not wait for that. The
// goroutine ends when f returns.
func askAsync(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// onHealth records the provider's health.
func (w *ReachWatch) onHealth(err error) {
	w.mu.Lock()
	w.healthy = err == nil
	w.mu.Unlock()
	w.Reachable()
}

// Reachable reports whether a member can be reached now, and keeps lost
// in step with the answer.
func (w *ReachWatch) Reachable() bool {
	n, known := w.count()
	w.mu.Lock()
	defer w.mu.Unlock()
	// Before the first member list, calls wait for it (actors/front, client.go) unless
	// the provider has found nobody.
	ok := w.healthy && (n > 0 || !known)
	switch {
	case ok && w.down:
		w.down, w.lost = false, make(chan struct{})
	case !ok && !w.down:
		w.down = true
		close(w.lost)
	}
	return ok
}

// LostCh is closed once no member is reachable (at once if none is now).
func (w *ReachWatch) LostCh() <-chan struct{} {
	w.Reachable()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}

func (w *ReachWatch) Close() {
	if w == nil {
		return
	}
	w.halt()
}
