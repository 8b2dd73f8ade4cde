package grain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// activatedRecord is the marker every activation writes first (fencing,
// docs/architecture.md, "Durability and fencing"). Both grain kinds share
// the format.
type activatedRecord struct {
	V         int    `json:"v"`
	Type      string `json:"type"`
	At        int64  `json:"at"`
	Activated struct {
		Nonce string `json:"nonce"`
	} `json:"activated"`
}

// journal is a grain's fenced view of its stream: it recovers the state,
// writes the activation marker, and verifies after every append that no
// newer activation stands before the appended records. It is used only from
// the grain's Receive (reads) and from one write goroutine at a time.
type journal struct {
	log    persistence.Log
	stream string
	// epoch is the offset of this activation's marker.
	epoch int64
	// verified is the offset up to which the stream has been read back and
	// applied.
	verified int64
	timeout  time.Duration
}

// recover loads the latest snapshot and replays later records through
// apply, then appends this activation's marker and reads back to it.
// restore receives the snapshot data, if any.
func (j *journal) recover(ctx context.Context, restore func([]byte) error, apply func(offset int64, data []byte) error) error {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	j.verified = -1
	snap, ok, err := j.log.LoadSnapshot(ctx, j.stream)
	if err != nil {
		return fmt.Errorf("load snapshot of %s: %w", j.stream, err)
	}
	if ok {
		if err := restore(snap.Data); err != nil {
			return fmt.Errorf("restore snapshot of %s: %w", j.stream, err)
		}
		j.verified = snap.Offset
	}
	var rec activatedRecord
	rec.V, rec.Type, rec.At = 1, "activated", time.Now().UnixNano()
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	rec.Activated.Nonce = hex.EncodeToString(nonce)
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	offs, err := j.log.Append(ctx, j.stream, data)
	if err != nil {
		return fmt.Errorf("append activation of %s: %w", j.stream, err)
	}
	j.epoch = offs[0]
	var foreign int64
	last, err := j.log.Replay(ctx, j.stream, j.verified, func(r persistence.Record) error {
		// Another activation's marker after ours: it owns the stream now.
		// Applying it would make its epoch ours, and our writes would pass
		// for its own.
		if j.foreignMarker(r.Offset, r.Data) {
			foreign = r.Offset
			return protocol.ErrSuperseded
		}
		return apply(r.Offset, r.Data)
	})
	if errors.Is(err, protocol.ErrSuperseded) {
		return fmt.Errorf("activate %s: marker %d stands after own marker %d: %w", j.stream, foreign, j.epoch, protocol.ErrSuperseded)
	}
	if err != nil {
		return fmt.Errorf("replay %s: %w", j.stream, err)
	}
	j.verified = last
	if last < j.epoch {
		return fmt.Errorf("replay %s stopped at %d before own marker %d: %w", j.stream, last, j.epoch, persistence.ErrUnavailable)
	}
	return nil
}

// appended is the outcome of one fenced write, handed back to the grain.
type appended struct {
	records []persistence.Record // everything read back after the write
	last    int64
	err     error
}

// write appends data and reads the stream back from the last verified
// offset. It runs outside the grain's Receive; the grain applies the records
// and checks them with check.
func (j *journal) write(ctx context.Context, from int64, data [][]byte) appended {
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if len(data) > 0 {
		if _, err := j.log.Append(ctx, j.stream, data...); err != nil {
			return appended{err: fmt.Errorf("append to %s: %w", j.stream, err)}
		}
	}
	var recs []persistence.Record
	last, err := j.log.Replay(ctx, j.stream, from, func(r persistence.Record) error {
		recs = append(recs, persistence.Record{Offset: r.Offset, Data: append([]byte(nil), r.Data...)})
		return nil
	})
	if err != nil {
		return appended{err: fmt.Errorf("read back %s: %w", j.stream, err)}
	}
	return appended{records: recs, last: last}
}

// foreignMarker reports whether a record read back is another activation's
// marker, written after ours: we are superseded.
func (j *journal) foreignMarker(offset int64, data []byte) bool {
	return offset > j.epoch && isActivated(data)
}

func isActivated(data []byte) bool {
	// Cheap pre-check before decoding: markers are small.
	if len(data) > 200 {
		return false
	}
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return false
	}
	return probe.Type == "activated"
}

// commit appends data, reads the stream back from the last verified
// offset and hands every record to apply, in order, advancing verified.
// It is for grains that write synchronously from their Receive. It
// returns ErrSuperseded, having applied nothing further, when another
// activation's marker is read back, and persistence.ErrUnavailable when
// the write or the read-back failed.
func (j *journal) commit(data [][]byte, apply func(offset int64, data []byte)) error {
	res := j.write(context.Background(), j.verified, data)
	if res.err != nil {
		return persistence.ErrUnavailable
	}
	for _, r := range res.records {
		if j.foreignMarker(r.Offset, r.Data) {
			return protocol.ErrSuperseded
		}
		apply(r.Offset, r.Data)
	}
	j.verified = res.last
	return nil
}

// saveSnapshot writes v's JSON as the stream's snapshot as of the records
// applied, waiting at most two seconds. A state whose JSON is over limit
// bytes (0: no limit) is not written, and neither is one when the log
// fails: a snapshot only shortens the next activation's replay, which
// starts from the one before.
func (j *journal) saveSnapshot(v any, limit int) error {
	data, err := json.Marshal(v)
	if err != nil || (limit > 0 && len(data) > limit) {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return j.log.SaveSnapshot(ctx, j.stream, persistence.Snapshot{Offset: j.verified, Data: data})
}
