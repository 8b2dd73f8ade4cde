package membership

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// DefaultLogFailGrace is how long a node whose log failed for good keeps
// answering (joins 503, healthz unhealthy) before it ends: long enough for
// a load balancer's health check to take it out of rotation and for the
// reason to reach the operator, short enough that its supervisor restarts
// it soon.
const DefaultLogFailGrace = 10 * time.Second

// LogWatch turns a log's failure for good (persistence.Failer: a write or
// fsync refused by the disk) into the node's answer: from the failure on,
// joins are refused at once with log_unavailable (a room may still hold
// numbers of a durable block, but a node whose disk fails takes no new
// visitor it may not be able to account for), /queue/healthz reports the
// reason, the error is logged once, and after the grace period the node
// fails (Node.Failed), so that its process ends and is restarted.
type LogWatch struct {
	err atomic.Pointer[error]
	stopper
}

// WatchLog watches l when it can fail for good; it returns nil otherwise.
func WatchLog(l persistence.Log, grace time.Duration, logger *slog.Logger, fail func(error)) *LogWatch {
	f, ok := l.(persistence.Failer)
	if !ok {
		return nil
	}
	if grace <= 0 {
		grace = DefaultLogFailGrace
	}
	w := &LogWatch{stopper: stopper{stop: make(chan struct{})}}
	w.wg.Add(1)
	go w.run(f, grace, logger, fail)
	return w
}

func (w *LogWatch) run(f persistence.Failer, grace time.Duration, logger *slog.Logger, fail func(error)) {
	defer w.wg.Done()
	select {
	case <-f.Failed():
	case <-w.stop:
		return
	}
	err := fmt.Errorf("event log failed: %w", f.Err())
	w.err.Store(&err)
	logger.Error("the event log failed: joins are refused and the node ends after the grace period, so that it restarts and checks the log",
		"error", f.Err(), "grace", grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
		fail(err)
	case <-w.stop:
	}
}

// Err is the log's failure, or nil while it works (or is not watched).
func (w *LogWatch) Err() error {
	if w == nil {
		return nil
	}
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (w *LogWatch) Close() {
	if w == nil {
		return
	}
	w.halt()
}
