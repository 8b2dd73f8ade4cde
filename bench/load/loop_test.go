package load

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/histogram"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// fakeClock is a clock that moves only when told to, or when the scheduler
// sleeps until an instant (it jumps there at once).
type fakeClock struct {
	mu     sync.Mutex // guards now and sleeps
	now    time.Time
	sleeps int
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps++
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err()
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func TestScheduleInstants(t *testing.T) {
	start := newFakeClock().Now()
	for _, tc := range []struct {
		name        string
		rate        float64
		duration    time.Duration
		maxRequests int
		wantCount   int
		wantAt      map[int]time.Duration // send index → offset from start
	}{
		{"100/s for 2s", 100, 2 * time.Second, 0, 200, map[int]time.Duration{0: 0, 1: 10 * time.Millisecond, 199: 1990 * time.Millisecond}},
		{"3/s for 1s", 3, time.Second, 0, 3, map[int]time.Duration{0: 0, 1: 333333333, 2: 666666667}},
		{"0.5/s for 10s", 0.5, 10 * time.Second, 0, 5, map[int]time.Duration{4: 8 * time.Second}},
		{"capped by max requests", 1000, 10 * time.Second, 50, 50, map[int]time.Duration{49: 49 * time.Millisecond}},
		{"fractional duration", 10, 250 * time.Millisecond, 0, 2, map[int]time.Duration{1: 100 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			s := NewSchedule(start, tc.rate, tc.duration, tc.maxRequests)
			if s.Count != tc.wantCount {
				t.Fatalf("count: got %d, want %d", s.Count, tc.wantCount)
			}
			var sentAt []time.Time
			var due []time.Time
			n := s.issue(context.Background(), clock, func(i int, d time.Time) {
				sentAt = append(sentAt, clock.Now())
				due = append(due, d)
			})
			if n != tc.wantCount || len(due) != tc.wantCount {
				t.Fatalf("issued: got %d (%d sends), want %d", n, len(due), tc.wantCount)
			}
			for i := range due {
				if !sentAt[i].Equal(due[i]) {
					t.Errorf("send %d: sent at %v, due %v", i, sentAt[i].Sub(start), due[i].Sub(start))
				}
				if i > 0 && !due[i].After(due[i-1]) {
					t.Errorf("send %d due at %v, not after send %d", i, due[i].Sub(start), i-1)
				}
			}
			for i, off := range tc.wantAt {
				if got := due[i].Sub(start); got != off {
					t.Errorf("send %d: due at %v, want %v", i, got, off)
				}
			}
		})
	}
}

func TestScheduleStopsWithContext(t *testing.T) {
	clock := newFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	s := NewSchedule(clock.Now(), 100, time.Second, 0)
	n := s.issue(ctx, clock, func(i int, _ time.Time) {
		if i == 9 {
			cancel()
		}
	})
	if n != 10 {
		t.Errorf("issued after cancel: got %d, want 10", n)
	}
}

// stallTest runs an open loop at 100/s for 2 s against a target that never
// answers until released, and returns what was seen once every send had
// been issued, and the recorder after the release.
func stallTest(t *testing.T, maxInFlight int) (startedWhenIssued int64, countsWhenIssued Counts, rec *Recorder, start time.Time) {
	t.Helper()
	clock := newFakeClock()
	start = clock.Now()
	release := make(chan struct{})
	var started atomic.Int64
	allStarted := make(chan struct{})
	want := int64(min(maxInFlight, 200))
	req := func(ctx context.Context, seq uint64) Class {
		if started.Add(1) == want {
			close(allStarted)
		}
		<-release
		return OK
	}
	rec = NewRecorder()
	done := make(chan struct{})
	issued := make(chan struct{})
	go func() {
		defer close(done)
		openLoop(context.Background(), clock, NewSchedule(start, 100, 2*time.Second, 0), maxInFlight, rec, req, func() { close(issued) })
	}()
	<-issued
	<-allStarted
	startedWhenIssued = started.Load()
	countsWhenIssued, _ = rec.Total()
	// The target answers everything at once, 3 s after the start.
	clock.Set(start.Add(3 * time.Second))
	close(release)
	<-done
	return startedWhenIssued, countsWhenIssued, rec, start
}

func TestOpenLoopKeepsSendingWhileTargetStalls(t *testing.T) {
	started, counts, rec, _ := stallTest(t, 1000)
	if started != 200 {
		t.Errorf("requests open while the target stalled: got %d, want 200", started)
	}
	if counts.Requests != 0 {
		t.Errorf("outcomes before any answer: got %d, want 0", counts.Requests)
	}
	total, lat := rec.Total()
	if total.Requests != 200 || total.OK != 200 {
		t.Errorf("after release: got %d requests, %d ok, want 200, 200", total.Requests, total.OK)
	}
	// Latency runs from the instant each request was due.
	checkDueLatency(t, lat)
}

// checkDueLatency checks the latencies of a run at 100/s for 2 s whose
// answers all came at 3 s: send i was due at i×10ms.
func checkDueLatency(t *testing.T, lat *histogram.Histogram) {
	t.Helper()
	if got, want := lat.Max(), 3*time.Second; got != want {
		t.Errorf("max latency: got %v, want %v", got, want)
	}
	if got, want := lat.Min(), 3*time.Second-1990*time.Millisecond; got != want {
		t.Errorf("min latency: got %v, want %v", got, want)
	}
}

func TestOpenLoopDropsBeyondInFlightBound(t *testing.T) {
	started, counts, rec, _ := stallTest(t, 10)
	if started != 10 {
		t.Errorf("requests open: got %d, want 10", started)
	}
	if got := counts.Errors[ClassDropped]; got != 190 {
		t.Errorf("dropped while stalled: got %d, want 190", got)
	}
	total, lat := rec.Total()
	if total.Requests != 200 || total.OK != 10 || total.Errors[ClassDropped] != 190 {
		t.Errorf("after release: got %d requests, %d ok, %d dropped, want 200, 10, 190", total.Requests, total.OK, total.Errors[ClassDropped])
	}
	if got, want := lat.Min(), 3*time.Second-90*time.Millisecond; got != want {
		t.Errorf("min latency: got %v, want %v", got, want)
	}
}

func TestClosedLoopStopsAtRequestCap(t *testing.T) {
	clock := newFakeClock() // never moves: only the cap can stop the loop
	rec := NewRecorder()
	var calls atomic.Int64
	ClosedLoop(context.Background(), clock, 4, time.Hour, 100, rec, func(context.Context, uint64) Class {
		calls.Add(1)
		return OK
	})
	if got := calls.Load(); got != 100 {
		t.Errorf("requests: got %d, want 100", got)
	}
	if c, _ := rec.Total(); c.Requests != 100 || c.OK != 100 {
		t.Errorf("recorded: got %d requests, %d ok, want 100, 100", c.Requests, c.OK)
	}
}

func TestClosedLoopStopsAtDuration(t *testing.T) {
	clock := newFakeClock()
	rec := NewRecorder()
	var calls atomic.Int64
	ClosedLoop(context.Background(), clock, 1, 10*time.Second, 1000, rec, func(context.Context, uint64) Class {
		calls.Add(1)
		clock.Advance(time.Second) // each answer takes a second
		return Class5xx
	})
	if got := calls.Load(); got != 10 {
		t.Errorf("requests: got %d, want 10", got)
	}
	c, lat := rec.Total()
	if c.Errors[Class5xx] != 10 || lat.Count() != 0 {
		t.Errorf("got %d 5xx and %d latencies, want 10 and 0 (failures have no latency)", c.Errors[Class5xx], lat.Count())
	}
}

func TestMix(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Mix
		wantErr bool
	}{
		{"1:9", Mix{1, 9}, false},
		{" 2 : 3 ", Mix{2, 3}, false},
		{"0:1", Mix{0, 1}, false},
		{"1:0", Mix{1, 0}, false},
		{"0:0", Mix{}, true},
		{"1", Mix{}, true},
		{"a:b", Mix{}, true},
		{"-1:5", Mix{}, true},
	} {
		got, err := ParseMix(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseMix(%q): got %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	m := Mix{Joins: 1, Polls: 9}
	joins := 0
	for seq := range uint64(1000) {
		if m.isJoin(seq) {
			joins++
		}
	}
	if joins != 100 {
		t.Errorf("joins in 1000 requests of 1:9: got %d, want 100", joins)
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{500, "500ns"}, {1500, "1.50µs"}, {1234567, "1.23ms"}, {999_600_000, "1000ms"}, {12_345_000, "12.3ms"}, {2500 * time.Millisecond, "2.50s"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%v): got %q, want %q", int64(tc.d), got, tc.want)
		}
	}
}

// pacedStall runs a paced loop of conns connections at 100/s for 2 s
// against a target that never answers until released, and reports the
// requests open once every send was issued and the most open at once.
func pacedStall(t *testing.T, conns, maxInFlight int) (startedWhenIssued, mostOpen int64, rec *Recorder) {
	t.Helper()
	clock := newFakeClock()
	start := clock.Now()
	release := make(chan struct{})
	var started, open, most atomic.Int64
	req := func(ctx context.Context, seq uint64) Class {
		started.Add(1)
		n := open.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		open.Add(-1)
		return OK
	}
	rec = NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		PacedLoop(context.Background(), clock, NewSchedule(start, 100, 2*time.Second, 0), conns, maxInFlight, rec, req)
	}()
	// Every send is issued once the clock was slept on 200 times.
	testwait.Poll(10*time.Second, time.Millisecond, func() bool {
		clock.mu.Lock()
		sleeps := clock.sleeps
		clock.mu.Unlock()
		return sleeps == 200 && started.Load() == int64(conns)
	})
	startedWhenIssued = started.Load()
	clock.Set(start.Add(3 * time.Second))
	close(release)
	<-done
	return startedWhenIssued, most.Load(), rec
}

func TestPacedLoopQueuesOnItsConnections(t *testing.T) {
	started, most, rec := pacedStall(t, 4, 1000)
	if started != 4 || most != 4 {
		t.Errorf("requests open while the target stalled: got %d (at most %d at once), want 4: one per connection", started, most)
	}
	total, lat := rec.Total()
	if total.Requests != 200 || total.OK != 200 {
		t.Errorf("after release: got %d requests, %d ok, want 200, 200", total.Requests, total.OK)
	}
	// Waiting for a free connection counts: latency runs from the instant
	// each send was due to its answer.
	checkDueLatency(t, lat)
}

func TestPacedLoopDropsBeyondItsQueue(t *testing.T) {
	_, most, rec := pacedStall(t, 4, 10)
	total, _ := rec.Total()
	// Up to 4 on the connections (as many as had taken a send before the
	// schedule, which runs on a clock that jumps, filled the queue) and 10
	// waiting; every other send found the queue full.
	taken := total.OK - 10
	if most != 4 || total.Requests != 200 || taken < 0 || taken > 4 || total.Errors[ClassDropped] != 200-total.OK {
		t.Errorf("got %d open at most, %d requests, %d ok, %d dropped; want 4, 200, 10 to 14 ok, the rest dropped", most, total.Requests, total.OK, total.Errors[ClassDropped])
	}
}
