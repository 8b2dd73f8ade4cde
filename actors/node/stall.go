package node

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

// defaultStallLimit is the provider's health-check timeout.
const defaultStallLimit = 2 * time.Second

// stallWatch notices that this process did not run for longer than limit.
type stallWatch struct {
	limit time.Duration
	stopper

	once   sync.Once
	failed chan struct{} // closed on a stall
	err    error         // set before failed is closed
}

func newStallWatch(limit time.Duration) *stallWatch {
	w := &stallWatch{limit: limit, stopper: stopper{stop: make(chan struct{})}, failed: make(chan struct{})}
	if limit <= 0 {
		return w
	}
	w.wg.Add(1)
	go w.run()
	return w
}

func (w *stallWatch) run() {
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
				w.fail(fmt.Errorf("this node did not run for %v (more than the %v after which the cluster drops a member): its member list can no longer be trusted; restart it so that it joins under a new identity", gap.Round(time.Millisecond), w.limit))
				return
			}
			last = now
		}
	}
}

// fail ends the node's part in the cluster with err; only the first
// failure counts.
func (w *stallWatch) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.failed)
	})
}

func (w *stallWatch) close() {
	w.halt()
}
