package instances

import (
	"math"
	"runtime/metrics"
	"testing"
	"time"
)

func TestSchedP99(t *testing.T) {
	m := newMeter(nil)
	buckets := []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, math.Inf(1)}
	h := &metrics.Float64Histogram{Buckets: buckets, Counts: []uint64{0, 900, 90, 10, 0}}
	if got := m.schedP99(h); got != 0.1 {
		t.Fatalf("first read: got %v ms, want 0.1 (the bucket up to 100 µs)", got)
	}
	// Only the samples since the previous read count.
	h = &metrics.Float64Histogram{Buckets: buckets, Counts: []uint64{0, 1900, 90, 10, 100}}
	if got := m.schedP99(h); got != 1 {
		t.Fatalf("second read: got %v ms, want 1 (the top finite bound)", got)
	}
	if got := m.schedP99(h); got != 0 {
		t.Fatalf("nothing new: got %v, want 0", got)
	}
}

func TestMeasure(t *testing.T) {
	reqs := 0.0
	m := newMeter(func() float64 { return reqs })
	start := time.Now()
	m.measure(start, start)
	// Burn some CPU and count 50 requests in a second.
	deadline := time.Now().Add(100 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	reqs = 50
	f := m.measure(start.Add(time.Second), start)
	if f.requestsPerSecond != 50 || f.cpuPercent <= 0 || f.heap == 0 || f.rss == 0 || f.goroutines == 0 {
		t.Fatalf("got %+v (x %d), want 50 req/s and CPU, memory, goroutines above 0", f, x)
	}
}
