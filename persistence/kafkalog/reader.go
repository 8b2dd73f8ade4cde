package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// Reads go through kafka.Conn and ReadBatch rather than kafka.Reader (which
// blocks at the end of a partition) or Client.Fetch: on one partition of 10^6
// small records ReadBatch was 3.6x faster than Client.Fetch here.

const (
	fetchMaxBytes = 4 << 20
	// fetchMaxWait only matters if a fetch below the high watermark finds
	// nothing, which should not happen; it keeps such a fetch short.
	fetchMaxWait = 250 * time.Millisecond
)

// Replay delivers the stream's records after offset after, up to the
// partition's high watermark read when Replay starts: it never waits for new
// records. Records of other streams sharing the partition are skipped, so the
// cost is that of reading the partition from after+1. fn owns rec.Data.
func (l *Log) Replay(ctx context.Context, stream string, after int64, fn func(persistence.Record) error) (int64, error) {
	if l.closed.Load() {
		return after, ErrClosed
	}
	tp := topicPartition{l.cfg.EventsTopic, l.writerFor(l.events, stream).partition}
	last := after
	err := l.withConn(ctx, tp, func(c *kafka.Conn, touched *bool) error {
		// Start no lower than the partition's first offset: below it,
		// where retention has dropped the head, the broker's answer is not
		// always one kafka-go reads as OffsetOutOfRange.
		first, hwm, err := c.ReadOffsets()
		if err != nil {
			return fmt.Errorf("read offsets: %w", err)
		}
		return l.readRange(ctx, c, max(after+1, last+1, first), hwm, func(m kafka.Message) error {
			*touched = true
			if string(m.Key) != stream {
				return nil
			}
			if err := fn(persistence.Record{Offset: m.Offset, Data: m.Value}); err != nil {
				return &callbackError{err}
			}
			last = m.Offset
			return nil
		})
	})
	if cerr := (*callbackError)(nil); errors.As(err, &cerr) {
		return last, cerr.err
	}
	if err != nil {
		return last, l.fail(fmt.Sprintf("replay %s from %s/%d", stream, tp.topic, tp.partition), err)
	}
	return last, nil
}

// readWindowsBackwards reads the partition in windows of offsets, the newest
// first, each window window× 4 larger than the one before, calling fn in
// offset order within a window, until found reports true or the start of the
// partition is reached.
func (l *Log) readWindowsBackwards(ctx context.Context, topic string, partition int, window int64, fn func(kafka.Message) error, found func() bool) error {
	tp := topicPartition{topic, partition}
	err := l.withConn(ctx, tp, func(c *kafka.Conn, touched *bool) error {
		first, end, err := c.ReadOffsets()
		if err != nil {
			return fmt.Errorf("read offsets: %w", err)
		}
		for end > first && !found() {
			start := max(first, end-window)
			if err := l.readRange(ctx, c, start, end, func(m kafka.Message) error {
				*touched = true
				return fn(m)
			}); err != nil {
				return err
			}
			end, window = start, window*4
		}
		return nil
	})
	if err != nil {
		return l.fail(fmt.Sprintf("read %s/%d", topic, partition), err)
	}
	return nil
}

// readRange calls fn for every message of c's partition with from <= offset
// < to, in order. Offsets missing from the log (compaction, records expired
// by retention) are skipped.
func (l *Log) readRange(ctx context.Context, c *kafka.Conn, from, to int64, fn func(kafka.Message) error) error {
	next := from
	for next < to {
		if err := c.SetDeadline(l.deadline(ctx)); err != nil {
			return err
		}
		if _, err := c.Seek(next, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
			return err
		}
		b := c.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: fetchMaxBytes, MaxWait: fetchMaxWait})
		start := next
		var fnErr error
		for next < to {
			m, err := b.ReadMessage()
			if err != nil {
				break // io.EOF ends the batch; other errors come back from Close
			}
			next = m.Offset + 1
			if m.Offset >= to {
				break
			}
			if fnErr = fn(m); fnErr != nil {
				break
			}
		}
		// After a batch whose tail was compacted away, the batch knows the
		// next offset that exists.
		if o := b.Offset(); fnErr == nil && o > next {
			next = o
		}
		err := b.Close()
		switch {
		case fnErr != nil:
			return fnErr
		case errors.Is(err, kafka.OffsetOutOfRange) && next == start:
			// Retention removed the head of the partition: go on from its
			// first offset.
			first, ferr := c.ReadFirstOffset()
			if ferr != nil {
				return ferr
			}
			if first <= next {
				return fmt.Errorf("fetch at %d: %w", next, err)
			}
			next = first
			continue
		case err != nil:
			return fmt.Errorf("fetch at %d: %w", start, err)
		case next == start:
			return fmt.Errorf("fetch at %d found nothing below the high watermark %d", start, to)
		}
	}
	return nil
}

// deadline is the deadline of one request: ctx's, or RequestTimeout from now
// when that comes first.
func (l *Log) deadline(ctx context.Context) time.Time {
	d := time.Now().Add(l.cfg.RequestTimeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// callbackError carries an error returned by the caller's fn through the
// read path, so that it is handed back as it is.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
func (e *callbackError) Unwrap() error { return e.err }

// withConn runs op on a connection to the partition's leader: an idle one
// from the pool when there is one, else a new one. The broker closes idle
// connections, so when op fails on a pooled connection before it touched a
// record it runs once more on a new connection; and while the partition's
// leadership is moving (a broker just restarted, an election), it runs
// again on a new connection after a pause (onNewLeader). op sets *touched
// once it has handed a record on.
func (l *Log) withConn(ctx context.Context, tp topicPartition, op func(c *kafka.Conn, touched *bool) error) error {
	if c := l.conns.get(tp); c != nil {
		touched := false
		err := l.runOn(ctx, tp, c, func(c *kafka.Conn) error { return op(c, &touched) })
		var cerr *callbackError
		if err == nil || touched || ctx.Err() != nil || errors.As(err, &cerr) {
			return err
		}
	}
	return onNewLeader(ctx, leaderPause, func() (bool, error) {
		c, err := l.dial(ctx, tp)
		if err != nil {
			return false, err
		}
		touched := false
		err = l.runOn(ctx, tp, c, func(c *kafka.Conn) error { return op(c, &touched) })
		return touched, err
	})
}

// leaderTries bounds the attempts of onNewLeader; leaderPause is its first
// pause, doubled after each attempt up to leaderMaxPause: 0.1 + 0.2 + 0.4 +
// 0.8 s and then 1 s at a time, about 10 s in all (never past the caller's
// context). A single broker led its partitions again within 0.1 s of a
// restart on an idle machine here, and has been seen to answer "not
// leader" for longer on a loaded one.
const (
	leaderTries    = 14
	leaderPause    = 100 * time.Millisecond
	leaderMaxPause = time.Second
)

// onNewLeader runs attempt, and runs it again after a pause (pause, then
// twice as long each time up to leaderMaxPause, at most leaderTries
// attempts in all, never past ctx) while it fails because the partition
// has no leader yet or the broker asked no longer leads it, and has touched
// no record. Any other outcome, the last attempt's included, is returned as
// it is.
func onNewLeader(ctx context.Context, pause time.Duration, attempt func() (touched bool, err error)) error {
	for i := 1; ; i++ {
		touched, err := attempt()
		if err == nil || touched || i == leaderTries || !leaderMoving(err) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, leaderMaxPause)
	}
}

// leaderMoving reports whether err says that the partition's leadership is
// being settled, which a new connection to the leader after a pause cures.
func leaderMoving(err error) bool {
	return errors.Is(err, kafka.NotLeaderForPartition) || errors.Is(err, kafka.LeaderNotAvailable)
}

// runOn runs op on c, closes c when ctx ends meanwhile (that unblocks a read
// at once) or op fails, and otherwise returns c to the pool.
func (l *Log) runOn(ctx context.Context, tp topicPartition, c *kafka.Conn, op func(*kafka.Conn) error) error {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	err := op(c)
	if !stop() {
		if err == nil {
			err = ctx.Err()
		}
		return err
	}
	if err != nil {
		c.Close()
		return err
	}
	if c.SetDeadline(time.Time{}) != nil {
		c.Close()
		return nil
	}
	l.conns.put(tp, c)
	return nil
}

// dial connects to the partition's leader, asking each bootstrap broker in
// turn where it is.
func (l *Log) dial(ctx context.Context, tp topicPartition) (*kafka.Conn, error) {
	var errs []error
	for _, b := range l.cfg.Brokers {
		c, err := l.dialer.DialLeader(ctx, "tcp", b, tp.topic, tp.partition)
		if err == nil {
			return c, nil
		}
		errs = append(errs, fmt.Errorf("via %s: %w", b, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connect to the leader of %s/%d: %w", tp.topic, tp.partition, errors.Join(errs...))
}

type topicPartition struct {
	topic     string
	partition int
}

// connPool keeps a few idle fetch connections per partition, so that a
// Replay (one per room activation, and one per fencing read-back) skips the
// leader lookup and the dial.
type connPool struct {
	mu     sync.Mutex // guards idle and closed
	idle   map[topicPartition][]idleConn
	closed bool
}

type idleConn struct {
	c     *kafka.Conn
	since time.Time
}

const (
	maxIdlePerPartition = 2
	// The broker drops idle connections after connections.max.idle.ms (10
	// minutes by default); give them up well before.
	maxIdleTime = time.Minute
)

func (p *connPool) get(tp topicPartition) *kafka.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for cs := p.idle[tp]; len(cs) > 0; cs = p.idle[tp] {
		ic := cs[len(cs)-1]
		p.idle[tp] = cs[:len(cs)-1]
		if time.Since(ic.since) < maxIdleTime {
			return ic.c
		}
		ic.c.Close()
	}
	return nil
}

func (p *connPool) put(tp topicPartition, c *kafka.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle[tp]) >= maxIdlePerPartition {
		c.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[topicPartition][]idleConn{}
	}
	p.idle[tp] = append(p.idle[tp], idleConn{c: c, since: time.Now()})
}

func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for tp, cs := range p.idle {
		for _, ic := range cs {
			ic.c.Close()
		}
		delete(p.idle, tp)
	}
}
