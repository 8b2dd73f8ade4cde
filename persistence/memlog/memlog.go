// Package memlog is an in-memory persistence.Log: a fake for fast unit
// tests of the grains. It is not durable; never use it to serve.
package memlog

import (
	"context"
	"errors"
	"sync"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// Log keeps every stream in memory. Offsets are global and increasing, like
// a Kafka partition shared by all streams.
type Log struct {
	mu sync.Mutex
	// mu guards everything below.
	next    int64
	streams map[string][]persistence.Record
	snaps   map[string]persistence.Snapshot
	closed  bool
	// Down, while true, makes every call fail with ErrUnavailable (tests of
	// a broker outage).
	down bool
}

// New returns an empty log.
func New() *Log {
	return &Log{streams: map[string][]persistence.Record{}, snaps: map[string]persistence.Snapshot{}}
}

// SetDown simulates an outage.
func (l *Log) SetDown(down bool) {
	l.mu.Lock()
	l.down = down
	l.mu.Unlock()
}

var errClosed = errors.New("memlog: closed")

func (l *Log) check() error {
	if l.closed {
		return errClosed
	}
	if l.down {
		return persistence.ErrUnavailable
	}
	return nil
}

// Append implements persistence.Log.
func (l *Log) Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return nil, err
	}
	offs := make([]int64, len(data))
	for i, d := range data {
		offs[i] = l.next
		l.streams[stream] = append(l.streams[stream], persistence.Record{Offset: l.next, Data: append([]byte(nil), d...)})
		l.next++
	}
	return offs, nil
}

// Replay implements persistence.Log.
func (l *Log) Replay(ctx context.Context, stream string, after int64, fn func(persistence.Record) error) (int64, error) {
	l.mu.Lock()
	if err := l.check(); err != nil {
		l.mu.Unlock()
		return after, err
	}
	recs := l.streams[stream]
	l.mu.Unlock()
	last := after
	for _, r := range recs {
		if r.Offset <= after {
			continue
		}
		if err := fn(r); err != nil {
			return last, err
		}
		last = r.Offset
	}
	return last, nil
}

// SaveSnapshot implements persistence.Log.
func (l *Log) SaveSnapshot(ctx context.Context, stream string, s persistence.Snapshot) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	if old, ok := l.snaps[stream]; ok && s.Offset < old.Offset {
		return nil // the newer snapshot stays (retention contract)
	}
	l.snaps[stream] = persistence.Snapshot{Offset: s.Offset, Data: append([]byte(nil), s.Data...)}
	return nil
}

// Expire drops every record a snapshot covers, as a retention window that
// has passed for all of them would.
func (l *Log) Expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for stream, recs := range l.streams {
		snap, ok := l.snaps[stream]
		if !ok {
			continue
		}
		i := 0
		for i < len(recs) && recs[i].Offset <= snap.Offset {
			i++
		}
		l.streams[stream] = append([]persistence.Record(nil), recs[i:]...)
	}
}

// LoadSnapshot implements persistence.Log.
func (l *Log) LoadSnapshot(ctx context.Context, stream string) (persistence.Snapshot, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return persistence.Snapshot{}, false, err
	}
	s, ok := l.snaps[stream]
	return s, ok, nil
}

// Close implements persistence.Log.
func (l *Log) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return nil
}

var _ persistence.Log = (*Log)(nil)
