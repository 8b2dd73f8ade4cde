package load

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Request sends the seq-th request of a run and classifies its outcome. It
// must return by its own timeout; it is called from many goroutines at once.
type Request func(ctx context.Context, seq uint64) Class

// Schedule is the open loop's timetable: send i is due at Start + i/Rate.
type Schedule struct {
	Start time.Time
	// Rate is sends per second.
	Rate float64
	// Count is the number of sends.
	Count int
}

// NewSchedule plans rate×duration sends from start, but no more than
// maxRequests when maxRequests > 0.
func NewSchedule(start time.Time, rate float64, duration time.Duration, maxRequests int) Schedule {
	n := int(math.Floor(rate*duration.Seconds() + 1e-9))
	if maxRequests > 0 {
		n = min(n, maxRequests)
	}
	return Schedule{Start: start, Rate: rate, Count: max(n, 0)}
}

// At returns the instant send i is due.
func (s Schedule) At(i int) time.Time {
	return s.Start.Add(time.Duration(math.Round(float64(i) * float64(time.Second) / s.Rate)))
}

// issue walks the schedule: it sleeps until each send is due and calls
// send, which must not block. Because the schedule, not the answers, sets
// the pace, a stalled target does not slow the offered load. It returns the
// number of sends issued, fewer than Count only when ctx ends.
func (s Schedule) issue(ctx context.Context, clock Clock, send func(i int, due time.Time)) int {
	for i := range s.Count {
		due := s.At(i)
		if err := clock.SleepUntil(ctx, due); err != nil {
			return i
		}
		send(i, due)
	}
	return s.Count
}

// OpenLoop sends requests on schedule whether or not earlier ones have
// answered. Latency is measured from the instant a request was due, not
// when it left, so a stall of the target (or of the runner) shows in the
// latency instead of silently lowering the load (coordinated omission). At
// most maxInFlight requests are open at once; a send due while the bound is
// reached is not made and counts as ClassDropped. OpenLoop returns when
// every request sent has finished.
func OpenLoop(ctx context.Context, clock Clock, s Schedule, maxInFlight int, rec *Recorder, req Request) {
	openLoop(ctx, clock, s, maxInFlight, rec, req, nil)
}

// openLoop is OpenLoop with a hook called once every send has been issued
// and before waiting for the open ones, so tests can look at that moment.
func openLoop(ctx context.Context, clock Clock, s Schedule, maxInFlight int, rec *Recorder, req Request, issued func()) {
	slots := make(chan struct{}, max(maxInFlight, 1))
	var wg sync.WaitGroup
	s.issue(ctx, clock, func(i int, due time.Time) {
		select {
		case slots <- struct{}{}:
		default:
			rec.Record(0, ClassDropped)
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			class := req(ctx, uint64(i))
			rec.Record(clock.Now().Sub(due), class)
		}()
	})
	if issued != nil {
		issued()
	}
	wg.Wait()
}

// PacedLoop is the open loop over a fixed set of connections, the way wrk2
// offers a rate: conns workers, each on its own keep-alive connection,
// take the sends in the order they fall due. A send waits in a queue of at
// most maxInFlight while every worker is busy (counted as ClassDropped when
// the queue is full), and its latency is measured from the instant it was
// due, so waiting for a free connection counts. Unlike OpenLoop, the client
// never dials in the middle of a run: a burst of slow answers costs queueing
// on the same connections, not a storm of new ones, which on a small machine
// is the client's cost and not the server's. It returns when every send
// taken has finished.
func PacedLoop(ctx context.Context, clock Clock, s Schedule, conns, maxInFlight int, rec *Recorder, req Request) {
	type send struct {
		i   int
		due time.Time
	}
	queue := make(chan send, max(maxInFlight, 1))
	var wg sync.WaitGroup
	for range max(conns, 1) {
		wg.Go(func() {
			for sd := range queue {
				if ctx.Err() != nil {
					continue // drained: the run was cancelled
				}
				class := req(ctx, uint64(sd.i))
				rec.Record(clock.Now().Sub(sd.due), class)
			}
		})
	}
	s.issue(ctx, clock, func(i int, due time.Time) {
		select {
		case queue <- send{i, due}:
		default:
			rec.Record(0, ClassDropped)
		}
	})
	close(queue)
	wg.Wait()
}

// ClosedLoop runs conns workers, each sending its next request as soon as
// the previous one answered, until duration has passed on clock or
// maxRequests (when > 0) have been sent in all. Latency is measured from
// each request's own send. It returns when every worker has stopped.
func ClosedLoop(ctx context.Context, clock Clock, conns int, duration time.Duration, maxRequests int, rec *Recorder, req Request) {
	deadline := clock.Now().Add(duration)
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range max(conns, 1) {
		wg.Go(func() {
			for ctx.Err() == nil {
				seq := sent.Add(1) - 1
				if maxRequests > 0 && seq >= int64(maxRequests) {
					return
				}
				start := clock.Now()
				if !start.Before(deadline) {
					return
				}
				class := req(ctx, uint64(seq))
				rec.Record(clock.Now().Sub(start), class)
			}
		})
	}
	wg.Wait()
}
