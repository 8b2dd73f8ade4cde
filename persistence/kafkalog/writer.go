package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// partitionWriter is the group commit of one topic partition. Appends queue
// their records; while a produce request is in flight, later appends gather
// in the queue and leave together in the next request as soon as it returns.
// So a lone append pays one round trip, and many concurrent appends share
// requests, with no timer in the path. One request in flight at a time keeps
// the partition's order equal to the order of the queue.
type partitionWriter struct {
	log       *Log
	topic     string
	partition int

	mu       sync.Mutex    // guards the fields below
	queue    []*appendCall // waiting for the next request
	pending  int           // bytes in queue
	flushing bool          // a flush goroutine owns the queue's head
	closed   bool          // Close was called: take no more calls
}

// appendCall is one waiting Append. It carries what the flusher needs to
// know of the caller's context: whether the caller still waits, and until
// when.
type appendCall struct {
	key      []byte
	values   [][]byte
	size     int
	gone     <-chan struct{} // closed once the caller stopped waiting
	goneErr  func() error
	deadline time.Time         // zero when the caller set none
	done     chan appendResult // buffered: the flusher never blocks on it
}

// abandoned returns the caller's context error once it stopped waiting.
func (c *appendCall) abandoned() error {
	select {
	case <-c.gone:
		return c.goneErr()
	default:
		return nil
	}
}

type appendResult struct {
	base int64 // offset of values[0]
	err  error
}

// write appends values under key as one record batch and returns the offset
// of the first. It waits for the acknowledgement or for ctx.
func (w *partitionWriter) write(ctx context.Context, key []byte, values [][]byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, w.log.fail("not sent", err)
	}
	c := &appendCall{key: key, gone: ctx.Done(), goneErr: ctx.Err, done: make(chan appendResult, 1)}
	c.deadline, _ = ctx.Deadline()
	// The request may still be encoded after the caller gave up and reused
	// its buffers: send copies, in one allocation.
	n := 0
	for _, v := range values {
		n += len(v)
		c.size += len(key) + len(v) + 32 // roughly a record's framing
	}
	buf := make([]byte, 0, n)
	c.values = make([][]byte, len(values))
	for i, v := range values {
		buf = append(buf, v...)
		c.values[i] = buf[len(buf)-len(v):]
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	if w.pending+c.size > w.log.cfg.MaxPendingBytes && w.pending > 0 {
		w.mu.Unlock()
		return 0, w.log.fail("not sent", fmt.Errorf("%w: %d bytes already wait for %s/%d", errQueueFull, w.pending, w.topic, w.partition))
	}
	w.queue = append(w.queue, c)
	w.pending += c.size
	if !w.flushing {
		w.flushing = true
		w.log.flushes.Add(1)
		go w.flush()
	}
	w.mu.Unlock()

	select {
	case r := <-c.done:
		return r.base, r.err
	case <-ctx.Done():
		return 0, w.log.fail("not acknowledged in time (the records may still be written)", ctx.Err())
	}
}

var errQueueFull = errors.New("append queue full")

// flush sends the queue in requests of up to MaxBatchBytes until it is empty.
// It is the only sender of its partition while it runs.
func (w *partitionWriter) flush() {
	defer w.log.flushes.Done()
	for {
		w.mu.Lock()
		n, size := 0, 0
		for n < len(w.queue) && (n == 0 || size+w.queue[n].size <= w.log.cfg.MaxBatchBytes) {
			size += w.queue[n].size
			n++
		}
		if n == 0 {
			w.flushing = false
			w.queue = nil
			w.mu.Unlock()
			return
		}
		calls := make([]*appendCall, n)
		copy(calls, w.queue)
		w.queue = w.queue[n:]
		w.pending -= size
		w.mu.Unlock()
		w.send(calls)
	}
}

// send produces the calls' records in one request and answers each call.
func (w *partitionWriter) send(calls []*appendCall) {
	// A caller that already gave up has been answered with ErrUnavailable;
	// not writing its records keeps the log free of them.
	live := calls[:0]
	for _, c := range calls {
		if err := c.abandoned(); err != nil {
			c.done <- appendResult{err: w.log.fail("not sent", err)}
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	now := time.Now()
	// The request serves every live caller: it may run until the last of
	// their deadlines, never past RequestTimeout.
	deadline := now.Add(w.log.cfg.RequestTimeout)
	latest := time.Time{}
	for _, c := range live {
		if c.deadline.IsZero() {
			latest = deadline
			break
		}
		if c.deadline.After(latest) {
			latest = c.deadline
		}
	}
	if latest.Before(deadline) {
		deadline = latest
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	base, err := w.produce(ctx, func() kafka.RecordReader {
		var records []kafka.Record
		for _, c := range live {
			for _, v := range c.values {
				records = append(records, kafka.Record{Time: now, Key: kafka.NewBytes(c.key), Value: kafka.NewBytes(v)})
			}
		}
		return kafka.NewRecordReader(records...)
	})
	cancel()
	if err != nil {
		err = w.log.fail(fmt.Sprintf("produce to %s/%d", w.topic, w.partition), err)
		for _, c := range live {
			c.done <- appendResult{err: err}
		}
		return
	}
	for _, c := range live {
		c.done <- appendResult{base: base}
		base += int64(len(c.values))
	}
}

// retryFor bounds how long a produce request is sent again after errors that
// prove it was not written (no leader yet on a new topic, a leader that just
// moved, a refused connection). Longer outages are the caller's to handle:
// it answers 503 and retries.
const retryFor = time.Second

// produce sends the records in one request and returns the offset of the
// first. It retries only while the broker's answer proves nothing was
// written, so a retry never duplicates records. records builds the request's
// records anew for every try: a kafka.Record's Key and Value are readers that
// sending consumes, and a second send of the same records writes them empty.
func (w *partitionWriter) produce(ctx context.Context, records func() kafka.RecordReader) (int64, error) {
	giveUp := time.Now().Add(retryFor)
	for pause := 25 * time.Millisecond; ; pause *= 2 {
		resp, err := w.log.client.Produce(ctx, &kafka.ProduceRequest{
			Topic:        w.topic,
			Partition:    w.partition,
			RequiredAcks: kafka.RequireAll,
			Records:      records(),
		})
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		if err == nil {
			return resp.BaseOffset, nil
		}
		if !notWritten(err) || time.Now().Add(pause).After(giveUp) || !sleep(ctx, pause) {
			return 0, err
		}
	}
}

// notWritten reports whether err proves the request left nothing in the log.
// Timeouts and broken connections do not: the broker may have written the
// records before the answer was lost. NotEnoughReplicasAfterAppend does not
// either: the leader wrote them.
func notWritten(err error) bool {
	for _, kerr := range []kafka.Error{
		kafka.NotLeaderForPartition,
		kafka.LeaderNotAvailable,
		kafka.UnknownTopicOrPartition,
		kafka.NotEnoughReplicas,
		kafka.BrokerNotAvailable,
	} {
		if errors.Is(err, kerr) {
			return true
		}
	}
	var oerr *net.OpError
	return errors.As(err, &oerr) && oerr.Op == "dial"
}
