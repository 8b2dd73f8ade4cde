package spent

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestSetBounded(t *testing.T) {
	s := New(1000)
	if !s.Spend(1, 100, 10) || s.Spend(1, 100, 10) {
		t.Fatal("a challenge spent twice")
	}
	// Expired entries are pruned as time passes.
	for i := uint64(2); i < 500; i++ {
		s.Spend(i, 100, 10)
	}
	s.Spend(10_000, 400, 101)
	if n := s.Size(); n != 1 {
		t.Fatalf("after every challenge but one expired: %d remembered, want 1", n)
	}
	if !s.Spend(1, 500, 101) {
		t.Fatal("an expired challenge id could not be spent again (its challenge cannot be replayed: it expired)")
	}
	// Never more than the cap: the oldest spent go first.
	for i := uint64(20_000); i < 25_000; i++ {
		s.Spend(i, 1000, 200)
	}
	if n := s.Size(); n != 1000 {
		t.Fatalf("after 5,000 spent: %d remembered, want the cap of 1000", n)
	}
	if s.Spend(24_999, 1000, 200) || !s.Spend(20_000, 1000, 200) {
		t.Fatal("the newest must be remembered, the oldest forgotten")
	}
	if len(s.order)-s.head != s.Size() {
		t.Fatalf("order holds %d entries for %d remembered", len(s.order)-s.head, s.Size())
	}
}

// BenchmarkSetMemory fills a set of 512 Ki entries and reports the heap it
// takes per remembered challenge.
func BenchmarkSetMemory(b *testing.B) {
	const limit = 1 << 19
	for b.Loop() {
		b.StopTimer()
		before := heapInUse()
		s := New(limit)
		b.StartTimer()
		for i := range uint64(limit) {
			s.Spend(i*0x9e3779b97f4a7c15, 1000, 1)
		}
		b.StopTimer()
		b.ReportMetric(float64(heapInUse()-before)/limit, "B/entry")
		b.ReportMetric(float64(heapInUse()-before)/(1<<20), "MB")
		_ = s.Size()
		b.StartTimer()
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func TestLimit(t *testing.T) {
	type limitCase struct {
		name      string
		perSecond int
		life      time.Duration
		want      int
	}
	for _, tc := range []limitCase{
		{"nothing to remember", 0, 300 * time.Second, 1},
		{"negative rate", -5, 300 * time.Second, 1},
		{"no life", 100, 0, 1},
		{"one", 1, time.Second, 1},
		{"a power of two exactly", 4, 256 * time.Second, 1 << 10},
		{"one over a power of two", 1025, time.Second, 1 << 11},
		{"a part of a second rounds up", 1, 1500 * time.Millisecond, 2},
		{"a node: 1,700 a second for five minutes", 1700, 300 * time.Second, 1 << 19},
		{"a proxy's room: 870 a second for five minutes", 870, 300 * time.Second, 1 << 18},
		{"capped", math.MaxInt, time.Duration(math.MaxInt64), MaxLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Limit(tc.perSecond, tc.life); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}
