package spent

import (
	"runtime"
	"testing"
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
