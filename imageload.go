package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// loadImage copies the image in dir into l, whose streams must all be
// empty, and returns the streams it wrote. The target
// hands out its own offsets, so the activation markers' offsets change:
// every record's and snapshot's "epoch" (the offset of the marker of the
// activation that wrote it, in every kind of stream) is rewritten to the
// marker's new offset, and each snapshot covers the new offset of the last
// record it covered (none, when retention had dropped them all). An epoch
// whose marker retention dropped becomes a negative number of its own,
// below every new marker, so fencing judges the records as before.
func loadImage(ctx context.Context, dir string, l persistence.Log) ([]string, error) {
	snaps := map[string]imageLine{}
	names := map[string]*imageStream{}
	if err := readImage(filepath.Join(dir, imageSnapshots), func(s imageLine) error {
		snaps[s.Stream] = s
		names[s.Stream] = newImageStream(s.Offset)
		return nil
	}); err != nil {
		return nil, err
	}
	events := filepath.Join(dir, imageEvents)
	if err := readImage(events, func(r imageLine) error {
		if names[r.Stream] == nil {
			names[r.Stream] = newImageStream(-1)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for name := range names {
		if err := untilAvailable(ctx, func() error { return checkEmpty(ctx, l, name) }); err != nil {
			return nil, err
		}
	}
	if err := copyRecords(ctx, events, l, names); err != nil {
		return nil, err
	}
	for name, s := range snaps {
		st := names[name]
		data, _, err := st.rewrite(s.Data)
		if err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", name, err)
		}
		if err := l.SaveSnapshot(ctx, name, persistence.Snapshot{Offset: st.covered, Data: data}); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(names))
	for name := range names {
		out = append(out, name)
	}
	return out, nil
}

// untilAvailable runs op until it succeeds or fails for another reason
// than an unavailable log, for at most 30 s: topics just created take a
// moment to have leaders.
func untilAvailable(ctx context.Context, op func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := op()
		if !errors.Is(err, persistence.ErrUnavailable) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// copyRecords appends the records of the image file events to l, stream
// by stream in batches, with their epochs rewritten.
func copyRecords(ctx context.Context, events string, l persistence.Log, names map[string]*imageStream) error {
	var b imageBatch
	err := readImage(events, func(r imageLine) error {
		s := names[r.Stream]
		data, marker, err := s.rewrite(r.Data)
		if err != nil {
			return fmt.Errorf("record %d of %s: %w", r.Offset, r.Stream, err)
		}
		if b.stream != r.Stream || len(b.data) >= imageBatchSize {
			if err := b.flush(ctx, l, names); err != nil {
				return err
			}
		}
		b.add(r.Stream, r.Offset, data, marker)
		if marker {
			return b.flush(ctx, l, names)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.flush(ctx, l, names)
}

func checkEmpty(ctx context.Context, l persistence.Log, name string) error {
	if _, ok, err := l.LoadSnapshot(ctx, name); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("the target log already has a snapshot of stream %s: restore into an empty log", name)
		}
		return err
	}
	last, err := l.Replay(ctx, name, -1, func(persistence.Record) error { return nil })
	if err == nil && last != -1 {
		err = fmt.Errorf("the target log already holds stream %s: restore into an empty log", name)
	}
	return err
}

// imageStream is what loading one stream remembers: the new offsets of its
// markers, the epochs whose markers were gone, and the new offset its
// snapshot covers.
type imageStream struct {
	marks   map[int64]int64
	gone    map[int64]int64
	snapAt  int64 // the image's offset the snapshot covers, -1: none
	covered int64 // the new offset of the last record at or below snapAt
}

func newImageStream(snapAt int64) *imageStream {
	return &imageStream{marks: map[int64]int64{}, gone: map[int64]int64{}, snapAt: snapAt, covered: -1}
}

// rewrite returns data with its epoch mapped to the new offsets, and
// whether it is an activation marker.
func (s *imageStream) rewrite(data []byte) ([]byte, bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, err
	}
	marker := string(m["type"]) == `"activated"`
	raw, ok := m["epoch"]
	if !ok {
		return data, marker, nil
	}
	old, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || old == 0 {
		return data, marker, err
	}
	m["epoch"] = json.RawMessage(strconv.FormatInt(s.epoch(old), 10))
	out, err := json.Marshal(m)
	return out, marker, err
}

func (s *imageStream) epoch(old int64) int64 {
	if n, ok := s.marks[old]; ok {
		return n
	}
	if n, ok := s.gone[old]; ok {
		return n
	}
	n := -int64(len(s.gone)) - 1
	s.gone[old] = n
	return n
}

// imageBatch is records of one stream waiting to be appended.
type imageBatch struct {
	stream  string
	old     []int64
	data    [][]byte
	markers []bool
}

func (b *imageBatch) add(stream string, old int64, data []byte, marker bool) {
	b.stream = stream
	b.old, b.data, b.markers = append(b.old, old), append(b.data, data), append(b.markers, marker)
}

func (b *imageBatch) flush(ctx context.Context, l persistence.Log, names map[string]*imageStream) error {
	if len(b.data) == 0 {
		return nil
	}
	offs, err := l.Append(ctx, b.stream, b.data...)
	if err != nil {
		return fmt.Errorf("load stream %s: %w", b.stream, err)
	}
	s := names[b.stream]
	for i, off := range offs {
		if b.markers[i] {
			s.marks[b.old[i]] = off
		}
		if b.old[i] <= s.snapAt {
			s.covered = off
		}
	}
	b.old, b.data, b.markers = b.old[:0], b.data[:0], b.markers[:0]
	return nil
}
