// Package load is the load-test runner: it drives a test room of a server
// under test with the visitor path (join, status, a mix of both) in an open
// or a closed loop, or measures WebSocket push latency, and records
// latencies in a histogram with per-second figures.
package load

import (
	"context"
	"time"
)

// Clock is the runner's source of time. The open-loop scheduler reads it
// for every send and sleeps on it, so tests drive the schedule with a fake
// clock instead of waiting.
type Clock interface {
	Now() time.Time
	// SleepUntil returns when t has come, or early with ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

// SystemClock is the wall clock (with Go's monotonic reading).
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// SleepUntil sleeps until t or until ctx is done.
func (SystemClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

var _ Clock = SystemClock{}
