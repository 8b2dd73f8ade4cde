// Package persistence defines the durable event log every room is built on,
// and the snapshot store beside it. Two implementations exist: the embedded
// file log (persistence/filelog, one node) and Kafka (persistence/kafkalog).
//
// A stream is the history of one room (named by the room id) or of the room
// directory. Within a stream records are totally ordered by their offset;
// offsets are increasing but need not be dense (Kafka shares a partition
// between rooms).
package persistence

import (
	"context"
	"errors"
)

// ErrUnavailable is wrapped by every error that means the log could not be
// reached or did not confirm durability in time. Callers answer such errors
// with 503 and retry; they never guess a result.
var ErrUnavailable = errors.New("event log unavailable")

// ErrDamaged is wrapped by errors meaning a stream's stored history is
// damaged beyond what the log can rebuild (its snapshots are bad and the
// records they covered are gone, or its offsets jump). Retrying does not
// help: the stream is refused, never rebuilt from what is left, until it
// is restored from a backup. Other streams are not affected.
var ErrDamaged = errors.New("stream damaged")

// Record is one event of a stream as it stands in the log.
type Record struct {
	Offset int64
	Data   []byte
}

// Snapshot is a stream's state as of the record at Offset (inclusive).
type Snapshot struct {
	Offset int64
	Data   []byte
}

// Log is a durable, ordered, append-only log of streams.
//
// Implementations are safe for concurrent use. A record handed to Append is
// durable (fsynced, or acknowledged by all in-sync replicas) when Append
// returns nil, and Replay returns it from then on, from any node.
//
// Retention. A log may drop a record once it is older than the log's
// retention window and the stream's latest snapshot covers it (its offset
// is at or below the snapshot's). Replay then starts at the oldest record
// kept, so a caller recovers with LoadSnapshot and a Replay after the
// snapshot's offset, which never misses a record. Offsets keep increasing
// across retention: a later record never takes a dropped one's offset. The
// embedded log keeps every record no snapshot covers; Kafka's broker drops
// by age alone (retention.ms knows nothing of snapshots), so an owner of a
// stream must snapshot it within the window of its last record (the grains
// do within 30 s of a change, and when they stop). A snapshot saved with a
// lower offset than the stored one may be ignored: what lies between the
// two may be gone.
type Log interface {
	// Append writes the records to the stream in the given order and returns
	// the offset of each. Either all of them are durable or the call fails.
	Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error)

	// Replay calls fn, in order, for every record of the stream whose offset
	// is greater than after (pass -1 for the whole stream), up to the end of
	// the stream as it stood when Replay was called. It returns the offset of
	// the last record delivered, or after when there was none. An error from
	// fn stops the replay and is returned.
	Replay(ctx context.Context, stream string, after int64, fn func(Record) error) (int64, error)

	// SaveSnapshot stores the latest snapshot of a stream, replacing any
	// earlier one. Once retention has dropped the records a snapshot
	// covers, the snapshot is the only copy of them.
	SaveSnapshot(ctx context.Context, stream string, s Snapshot) error

	// LoadSnapshot returns the latest snapshot of the stream; ok is false
	// when there is none. When no usable snapshot is left and the log no
	// longer holds the stream from its first record, it fails with an
	// error wrapping ErrDamaged rather than answer "none", so that the
	// caller never rebuilds the stream from its tail.
	LoadSnapshot(ctx context.Context, stream string) (s Snapshot, ok bool, err error)

	// Close flushes and releases the log. Calls after Close fail.
	Close() error
}

// Failer is implemented by a Log that can fail for good, as a disk that
// refused a write or an fsync: from then on no Append succeeds, and only a
// restart that reopens the log (and checks what the failure left) can serve
// again. A Log whose failures pass (Kafka out of reach) does not implement
// it; its errors wrap ErrUnavailable and callers retry.
type Failer interface {
	// Failed is closed at the failure; Err then says why, with the path.
	Failed() <-chan struct{}
	Err() error
}
