package instances

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// meter measures this process between two reports: CPU share, memory,
// goroutines, scheduler latency and request rate.
type meter struct {
	requests func() float64

	at       time.Time
	cpu      time.Duration
	reqs     float64
	sched    []uint64
	samples  []metrics.Sample
	started  bool
	pageSize uint64
}

const (
	metricSched      = "/sched/latencies:seconds"
	metricHeap       = "/memory/classes/heap/objects:bytes"
	metricGoroutines = "/sched/goroutines:goroutines"
	metricTotalMem   = "/memory/classes/total:bytes"
)

// figures are one measurement.
type figures struct {
	cpuPercent, schedP99Ms, requestsPerSecond float64
	rss, heap                                 uint64
	goroutines                                int
}

func newMeter(requests func() float64) *meter {
	return &meter{requests: requests, pageSize: uint64(os.Getpagesize()), samples: []metrics.Sample{
		{Name: metricSched}, {Name: metricHeap}, {Name: metricGoroutines}, {Name: metricTotalMem}}}
}

// measure returns the figures since the previous call (the first call
// measures since the process started).
func (m *meter) measure(now time.Time, started time.Time) figures {
	metrics.Read(m.samples)
	var f figures
	cpu := cpuTime()
	reqs := 0.0
	if m.requests != nil {
		reqs = m.requests()
	}
	prevAt, prevCPU, prevReqs := m.at, m.cpu, m.reqs
	if !m.started {
		prevAt = started
	}
	if el := now.Sub(prevAt); el > 0 {
		f.cpuPercent = round1(100 * float64(cpu-prevCPU) / float64(el))
		f.requestsPerSecond = round1((reqs - prevReqs) / el.Seconds())
	}
	m.at, m.cpu, m.reqs, m.started = now, cpu, reqs, true

	if h := m.samples[0].Value; h.Kind() == metrics.KindFloat64Histogram {
		f.schedP99Ms = m.schedP99(h.Float64Histogram())
	}
	if v := m.samples[1].Value; v.Kind() == metrics.KindUint64 {
		f.heap = v.Uint64()
	}
	f.goroutines = runtime.NumGoroutine()
	f.rss = m.rss()
	if f.rss == 0 && m.samples[3].Value.Kind() == metrics.KindUint64 {
		// Without /proc, what the Go runtime has mapped is the nearest.
		f.rss = m.samples[3].Value.Uint64()
	}
	return f
}

// schedP99 is the 99th percentile, in milliseconds, of the time goroutines
// waited to run since the previous call: the upper bound of the bucket
// holding it (runtime/metrics keeps a cumulative histogram).
func (m *meter) schedP99(h *metrics.Float64Histogram) float64 {
	delta := make([]uint64, len(h.Counts))
	var total uint64
	for i, c := range h.Counts {
		d := c
		if i < len(m.sched) && m.sched[i] <= c {
			d = c - m.sched[i]
		}
		delta[i] = d
		total += d
	}
	m.sched = append(m.sched[:0], h.Counts...)
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(0.99 * float64(total)))
	var cum uint64
	for i, d := range delta {
		cum += d
		if cum >= want {
			up := h.Buckets[i+1]
			if math.IsInf(up, 1) {
				up = h.Buckets[i]
			}
			return math.Round(up*1e6) / 1e3
		}
	}
	return 0
}

// rss reads the resident set from /proc/self/statm; 0 where there is none.
func (m *meter) rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * m.pageSize
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
