package kafkalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/segmentio/kafka-go"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// Export reads an image of the log for a backup: first every stream's
// latest snapshot (the snapshots topic up to its high watermark), handed
// to snap in stream order; then, partition by partition, every record of
// the events topic from the partition's first offset up to its high
// watermark read when the partition's turn comes, handed to rec in offset
// order. Each partition's image is consistent: it is the partition as it
// stood at one moment, and every snapshot handed to snap covers only
// records that moment includes (a snapshot is saved after the records it
// covers are durable). Partitions are not taken at one moment together;
// streams never span two partitions.
func (l *Log) Export(ctx context.Context, snap func(stream string, s persistence.Snapshot) error, rec func(stream string, r persistence.Record) error) error {
	if l.closed.Load() {
		return ErrClosed
	}
	snaps := map[string]persistence.Snapshot{}
	for p := range l.snapshots {
		if err := l.readPartition(ctx, l.cfg.SnapshotsTopic, p, func(m kafka.Message) error {
			if len(m.Value) == 0 {
				delete(snaps, string(m.Key)) // a tombstone
				return nil
			}
			if len(m.Value) < 9 || m.Value[0] != snapshotV1 {
				return fmt.Errorf("snapshot of %s at %d: unknown snapshot encoding (%d bytes)", m.Key, m.Offset, len(m.Value))
			}
			snaps[string(m.Key)] = persistence.Snapshot{Offset: int64(binary.BigEndian.Uint64(m.Value[1:9])), Data: m.Value[9:]}
			return nil
		}); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(snaps))
	for name := range snaps {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := snap(name, snaps[name]); err != nil {
			return err
		}
	}
	for p := range l.events {
		if err := l.readPartition(ctx, l.cfg.EventsTopic, p, func(m kafka.Message) error {
			return rec(string(m.Key), persistence.Record{Offset: m.Offset, Data: m.Value})
		}); err != nil {
			return err
		}
	}
	return nil
}

// readPartition hands fn every record of the partition from its first
// offset up to its high watermark as read at the start.
func (l *Log) readPartition(ctx context.Context, topic string, p int, fn func(kafka.Message) error) error {
	tp := topicPartition{topic, p}
	err := l.withConn(ctx, tp, func(c *kafka.Conn, touched *bool) error {
		first, hwm, err := c.ReadOffsets()
		if err != nil {
			return fmt.Errorf("read offsets: %w", err)
		}
		return l.readRange(ctx, c, first, hwm, func(m kafka.Message) error {
			*touched = true
			if err := fn(m); err != nil {
				return &callbackError{err}
			}
			return nil
		})
	})
	if cerr := (*callbackError)(nil); errors.As(err, &cerr) {
		return cerr.err
	}
	if err != nil {
		return l.fail(fmt.Sprintf("export %s/%d", topic, p), err)
	}
	return nil
}
