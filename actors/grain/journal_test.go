package grain

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// racingLog lets another activation write its marker right after ours,
// before our replay reads the stream back: two members placing the same
// grain at the same moment.
type racingLog struct {
	persistence.Log
	raced bool
}

func (l *racingLog) Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error) {
	offs, err := l.Log.Append(ctx, stream, data...)
	if err == nil && !l.raced && len(data) == 1 && isActivated(data[0]) {
		l.raced = true
		other := journal{log: l.Log, stream: stream, timeout: time.Second}
		if err := other.recover(ctx, func([]byte) error { return nil }, func(int64, []byte) error { return nil }); err != nil {
			return nil, err
		}
	}
	return offs, err
}

// TestActivationSeesNewerMarker checks that an activation whose replay
// meets a newer activation's marker gives up instead of taking that
// marker's epoch for its own (its writes would then pass for the newer
// activation's, and both would hand out the same numbers).
func TestActivationSeesNewerMarker(t *testing.T) {
	l := &racingLog{Log: memlog.New()}
	ctx := context.Background()
	j := journal{log: l, stream: "r1", timeout: time.Second}
	var applied []int64
	err := j.recover(ctx, func([]byte) error { return nil }, func(off int64, _ []byte) error {
		applied = append(applied, off)
		return nil
	})
	if !errors.Is(err, protocol.ErrSuperseded) {
		t.Fatalf("recover: got %v, want protocol.ErrSuperseded", err)
	}
	for _, off := range applied {
		if off > j.epoch {
			t.Fatalf("applied record %d after own marker %d", off, j.epoch)
		}
	}
	// The next activation wins again, cleanly.
	j2 := journal{log: l.Log, stream: "r1", timeout: time.Second}
	if err := j2.recover(ctx, func([]byte) error { return nil }, func(int64, []byte) error { return nil }); err != nil {
		t.Fatalf("a later activation: %v", err)
	}
}

// A grain's snapshot is its state's JSON as of the records applied; a
// state over the limit leaves the snapshot before it in place.
func TestJournalSavesSnapshotWithinLimit(t *testing.T) {
	l := memlog.New()
	ctx := context.Background()
	j := journal{log: l, stream: "s", timeout: time.Second}
	if err := j.recover(ctx, func([]byte) error { return nil }, func(int64, []byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := j.saveSnapshot(map[string]int{"a": 1}, 100); err != nil {
		t.Fatal(err)
	}
	if err := j.saveSnapshot(map[string]string{"a": string(make([]byte, 100))}, 100); err != nil {
		t.Fatal(err)
	}
	snap, ok, err := l.LoadSnapshot(ctx, "s")
	if err != nil || !ok {
		t.Fatalf("load: ok %v, err %v", ok, err)
	}
	if string(snap.Data) != `{"a":1}` || snap.Offset != j.verified {
		t.Fatalf("snapshot %s at %d, want {\"a\":1} at %d", snap.Data, snap.Offset, j.verified)
	}
}
