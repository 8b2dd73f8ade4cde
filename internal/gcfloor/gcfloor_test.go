package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		name        string
		live, floor uint64
		want        int
	}{
		{"no collection yet", 0, 64 * mib, Base},
		{"live heap at the floor", 64 * mib, 64 * mib, Base},
		{"live heap above the floor", 500 * mib, 64 * mib, Base},
		{"half the floor: the default reaches it", 32 * mib, 64 * mib, Base},
		{"just under half", 32*mib - 1, 64 * mib, Base + 1},
		{"a node's live heap", 6 * mib, 64 * mib, 967},
		{"tiny heap: capped", 1 << 10, 64 * mib, MaxPercent},
		{"floor past MaxFloor is MaxFloor", MaxFloor / 2, 1 << 62, Base},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Percent(c.live, c.floor, Base); got != c.want {
				t.Fatalf("Percent(%d, %d) = %d, want %d", c.live, c.floor, got, c.want)
			}
		})
	}
}

// TestPercentReachesTheFloor: between the bounds, the goal the percent
// gives is at the floor or above, and one less would fall short.
func TestPercentReachesTheFloor(t *testing.T) {
	floor := uint64(64 * mib)
	for live := uint64(700 << 10); live < floor/2; live = live*9/8 + 4093 {
		p := Percent(live, floor, Base)
		if p == Base || p == MaxPercent {
			continue
		}
		if goal := live * uint64(100+p) / 100; goal < floor {
			t.Fatalf("live %d: GOGC %d gives a goal of %d, under the floor %d", live, p, goal, floor)
		}
		if goal := live * uint64(100+p-1) / 100; goal >= floor {
			t.Fatalf("live %d: GOGC %d is not the least (%d reaches %d)", live, p, p-1, goal)
		}
	}
}

func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestFloorFollowsCollections: the floor sets GOGC after every
// collection (each one re-arms it), and Stop puts the default back.
func TestFloorFollowsCollections(t *testing.T) {
	f := Start(256 * mib)
	t.Cleanup(f.Stop)
	for round := range 3 {
		before := f.tunes.Load()
		runtime.GC()
		testwait.Until(t, 10*time.Second, "a retune after collection", func() bool { return f.tunes.Load() > before })
		if got, want := gogc(), int64(f.Percent()); got != want || want <= Base {
			t.Fatalf("round %d: GOGC in force %d, the floor's %d; want the same, above %d (a small test heap under a 256 MiB floor)", round, got, want, Base)
		}
	}
	f.Stop()
	if got := gogc(); got != Base {
		t.Fatalf("GOGC after Stop = %d, want %d", got, Base)
	}
	// A finalizer still armed runs tune after the next collection: it
	// must leave GOGC alone.
	f.tune()
	if got := gogc(); got != Base {
		t.Fatalf("GOGC after a stopped floor's tune = %d, want %d", got, Base)
	}
}

// TestFloorUnderTheLiveHeap: a floor under the live heap leaves Go's
// default.
func TestFloorUnderTheLiveHeap(t *testing.T) {
	f := Start(1)
	t.Cleanup(f.Stop)
	before := f.tunes.Load()
	runtime.GC()
	testwait.Until(t, 10*time.Second, "a retune after collection", func() bool { return f.tunes.Load() > before })
	if got := gogc(); got != Base {
		t.Fatalf("GOGC = %d with a 1-byte floor, want %d", got, Base)
	}
}
