package testwait

import (
	"sync/atomic"
	"testing"
	"time"
)

// Poll returns as soon as the condition holds, and false once the deadline
// has passed without it, after asking it at least once more.
func TestPoll(t *testing.T) {
	var calls atomic.Int32
	if !Poll(10*time.Second, time.Millisecond, func() bool { return calls.Add(1) == 3 }) {
		t.Fatal("a condition that holds at the third call: Poll returned false")
	}
	if calls.Load() != 3 {
		t.Fatalf("cond called %d times, want 3", calls.Load())
	}
	calls.Store(0)
	start := time.Now()
	if Poll(30*time.Millisecond, 5*time.Millisecond, func() bool { calls.Add(1); return false }) {
		t.Fatal("a condition that never holds: Poll returned true")
	}
	if took := time.Since(start); took < 30*time.Millisecond || calls.Load() < 2 {
		t.Fatalf("gave up after %v and %d calls, want 30 ms and more than one call", took, calls.Load())
	}
}

// recorder is a testing.TB that records a failure instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
}

// Until fails the test, naming the condition, when it does not hold in
// time, and does not fail it when it holds.
func TestUntil(t *testing.T) {
	r := &recorder{TB: t}
	Until(r, 10*time.Second, "holds", func() bool { return true })
	if r.failed != "" {
		t.Fatalf("a condition that holds failed the test: %q", r.failed)
	}
	UntilEvery(r, 20*time.Millisecond, time.Millisecond, "never", func() bool { return false })
	if r.failed == "" {
		t.Fatal("a condition that never holds did not fail the test")
	}
}
