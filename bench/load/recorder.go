package load

import (
	"maps"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/histogram"
)

// Class names the outcome of one request: OK, or the kind of error.
type Class string

// Outcome classes. Every request the runner was due to send ends in exactly
// one of them.
const (
	OK Class = ""
	// ClassTimeout: no answer within the request timeout.
	ClassTimeout Class = "timeout"
	// ClassNetwork: the connection failed (refused, reset, closed).
	ClassNetwork Class = "network"
	// ClassCanceled: the run was interrupted while the request was open.
	ClassCanceled Class = "canceled"
	Class3xx      Class = "3xx"
	Class4xx      Class = "4xx"
	Class5xx      Class = "5xx"
	// ClassInvalid: a 2xx answer the runner could not use (no ticket).
	ClassInvalid Class = "invalid"
	// ClassDropped: the open loop was due to send but the in-flight bound
	// was reached, so the request was never sent.
	ClassDropped Class = "dropped"
	// ClassDial: a WebSocket could not be opened.
	ClassDial Class = "dial"
	// ClassNoFrame: a socket did not receive the changed room frame in time.
	ClassNoFrame Class = "no_frame"
)

// Counts are the outcomes of a set of requests.
type Counts struct {
	// Requests counts every request due, including dropped ones.
	Requests int64
	OK       int64
	Errors   map[Class]int64
}

// ErrorCount reports the number of requests that did not end OK.
func (c Counts) ErrorCount() int64 {
	var n int64
	for _, v := range c.Errors {
		n += v
	}
	return n
}

func (c *Counts) add(class Class) {
	c.Requests++
	if class == OK {
		c.OK++
		return
	}
	if c.Errors == nil {
		c.Errors = map[Class]int64{}
	}
	c.Errors[class]++
}

// Second is the figures of one second of a run, for the live display.
type Second struct {
	// Index counts seconds from 1.
	Index int
	Counts
	// Rate is the successful answers per second in this interval.
	Rate          float64
	P50, P95, P99 time.Duration
}

// Recorder collects outcomes from concurrent requests: latencies of
// successful requests go to a histogram for the whole run and one for the
// current second.
type Recorder struct {
	mu           sync.Mutex // guards all fields below
	total        *histogram.Histogram
	window       *histogram.Histogram
	counts       Counts
	windowCounts Counts
	seconds      int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{total: histogram.New(), window: histogram.New()}
}

// Record counts one outcome. The latency counts only when class is OK.
func (r *Recorder) Record(latency time.Duration, class Class) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts.add(class)
	r.windowCounts.add(class)
	if class == OK {
		r.total.Record(latency)
		r.window.Record(latency)
	}
}

// Flip closes the current interval, which lasted interval, and returns its
// figures.
func (r *Recorder) Flip(interval time.Duration) Second {
	fresh := histogram.New() // allocated outside the lock
	r.mu.Lock()
	w, c := r.window, r.windowCounts
	r.window, r.windowCounts = fresh, Counts{}
	r.seconds++
	s := Second{Index: r.seconds, Counts: c}
	r.mu.Unlock()
	if interval > 0 {
		s.Rate = float64(c.OK) / interval.Seconds()
	}
	s.P50, s.P95, s.P99 = w.Quantile(0.50), w.Quantile(0.95), w.Quantile(0.99)
	return s
}

// Total returns the counts and a copy of the latency histogram of the run
// so far.
func (r *Recorder) Total() (Counts, *histogram.Histogram) {
	h := histogram.New()
	r.mu.Lock()
	defer r.mu.Unlock()
	h.Merge(r.total)
	c := r.counts
	c.Errors = maps.Clone(c.Errors)
	return c, h
}
