// Package gcfloor keeps the garbage collector's heap goal at or above a
// floor while the live heap is small.
//
// Go's default (GOGC=100) sets the next collection at twice the live heap.
// A node's live heap is a few megabytes (the actor system, the rooms'
// state), while net/http allocates a few kilobytes for every request, so at
// tens of thousands of requests a second the collector runs dozens of
// times a second, and its marking takes a share of a core that is then
// missing from the requests (4.4 µs of collector CPU per status request,
// measured with GODEBUG=gctrace=1). With a floor of 64 MiB the collector
// runs about ten times less often for the same work.
//
// After every collection the floor sets GOGC to the smallest value that
// puts the next goal at the floor, never below the base (100, Go's
// default): once the live heap is half the floor or more it changes
// nothing. A memory limit (GOMEMLIMIT) still bounds the heap as before; an
// operator's GOGC switches the floor off (the caller checks).
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Base is Go's default GOGC, the least the floor sets.
const Base = 100

// MaxPercent bounds the GOGC the floor sets: with a live heap of 640 KiB
// and a floor of 64 MiB it is reached, and below that the goal stays at
// the floor's order of magnitude anyway.
const MaxPercent = 10_000

// MaxFloor is the largest floor Start takes (1 TiB).
const MaxFloor = 1 << 40

// Percent is the GOGC that puts the next heap goal, live × (1 + GOGC/100),
// at floor or above, between base and MaxPercent.
func Percent(live, floor uint64, base int) int {
	floor = min(floor, MaxFloor)
	if live == 0 || floor <= live {
		return base
	}
	// Rounded up: the goal must not fall short of the floor. floor is at
	// most MaxFloor, so the product does not overflow.
	need := ((floor-live)*100 + live - 1) / live
	switch {
	case need < uint64(base):
		return base
	case need > MaxPercent:
		return MaxPercent
	}
	return int(need)
}

// Floor retunes GOGC after every collection until Stop.
type Floor struct {
	floor   uint64
	stopped atomic.Bool
	percent atomic.Int64
	tunes   atomic.Int64 // collections seen, for tests
	mu      sync.Mutex
	sample  []metrics.Sample
}

// Start keeps the heap goal at floor bytes or above and returns the
// running floor. floor 0 is refused by the caller, not here: it would
// leave GOGC at the base.
func Start(floor uint64) *Floor {
	f := &Floor{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	f.tune()
	f.arm()
	return f
}

// Percent is the GOGC the floor set last.
func (f *Floor) Percent() int { return int(f.percent.Load()) }

// Stop ends the retuning and puts GOGC back at the base.
func (f *Floor) Stop() {
	if f.stopped.Swap(true) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	debug.SetGCPercent(Base)
	f.percent.Store(Base)
}

// sentinel is garbage as soon as it is armed: its finalizer runs once
// after the next collection, retunes and arms a new one.
type sentinel struct {
	f *Floor
	_ [16]byte // past the tiny allocator, which would batch it with others
}

func (f *Floor) arm() {
	runtime.SetFinalizer(&sentinel{f: f}, func(s *sentinel) {
		if s.f.stopped.Load() {
			return
		}
		s.f.tune()
		s.f.arm()
	})
}

// tune reads the live heap of the last collection and sets GOGC for the
// next one.
func (f *Floor) tune() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped.Load() {
		return
	}
	f.tunes.Add(1)
	metrics.Read(f.sample)
	var live uint64
	if f.sample[0].Value.Kind() == metrics.KindUint64 {
		live = f.sample[0].Value.Uint64()
	}
	p := Percent(live, f.floor, Base)
	if int64(p) != f.percent.Load() {
		debug.SetGCPercent(p)
		f.percent.Store(int64(p))
	}
}
