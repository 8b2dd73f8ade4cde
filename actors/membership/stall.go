package membership

import (
	"fmt"
	"sync"
	"time"
)

// The automanaged provider drops a member whose health check has not
// answered within 2 s, and protoactor never admits a dropped member again
// under the same identity. A node that did not run for that long (stopped
// with SIGSTOP, a frozen VM, a swap storm) has been dropped by its peers, or
// has dropped them itself when its own checks timed out on resumption: its
// member list and theirs may then disagree for good, and two members keep
// activating the same rooms in turn (safe, by fencing, but useless). Such a
// node gives up, so that it is restarted and joins under a new identity.

// DefaultStallLimit is the provider's health-check timeout.
const DefaultStallLimit = 2 * time.Second

// StallWatch notices that this process did not run for longer than limit.
type StallWatch struct {
	limit time.Duration
	stopper

	once   sync.Once
	failed chan struct{} // closed on a stall
	err    error         // set before failed is closed
}

func NewStallWatch(limit time.Duration) *StallWatch {
	w := &StallWatch{limit: limit, stopper: stopper{stop: make(chan struct{})}, failed: make(chan struct{})}
	if limit <= 0 {
		return w
	}
	w.wg.Add(1)
	go w.run()
	return w
}

func (w *StallWatch) run() {
	defer w.wg.Done()
	period := min(w.limit/8, 250*time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			// The monotonic clock runs on while the process is stopped;
			// the tick's own time is when it was due, not when it came.
			now := time.Now()
			if gap := now.Sub(last); gap > w.limit {
				w.Fail(fmt.Errorf("this node did not run for %v (more than the %v after which the cluster drops a member): its member list can no longer be trusted; restart it so that it joins under a new identity", gap.Round(time.Millisecond), w.limit))
				return
			}
			last = now
		}
	}
}

// Fail ends the node's part in the cluster with err; only the first
// failure counts.
func (w *StallWatch) Fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.failed)
	})
}

// Failed is closed when the node failed; Err then says why.
func (w *StallWatch) Failed() <-chan struct{} { return w.failed }

// Err is the reason Failed was closed, nil before.
func (w *StallWatch) Err() error {
	select {
	case <-w.failed:
		return w.err
	default:
		return nil
	}
}

// Close stops the watch.
func (w *StallWatch) Close() {
	w.halt()
}
