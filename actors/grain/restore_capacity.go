package grain

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// RestoredCapacity is what a restore did to one capacity room.
type RestoredCapacity struct {
	ID string
	// Inside and Waiting are the image's; Held the slots held for a
	// session (capacity.Table.DecideRestore).
	Inside, Waiting, Held int
}

// HoldRestoredCapacity prepares the capacity rooms among streams of a log
// restored from a backup, as JumpRestoredRooms does the waiting rooms:
// each keeps its inside set and line and holds the slots the image saw
// free for one session, and a snapshot covers the hold.
func HoldRestoredCapacity(ctx context.Context, l persistence.Log, streams []string, now time.Time) ([]RestoredCapacity, error) {
	ids := make([]string, 0, len(streams))
	for _, s := range streams {
		if protocol.IsCapacityID(s) {
			ids = append(ids, s)
		}
	}
	sort.Strings(ids)
	var out []RestoredCapacity
	for _, id := range ids {
		r, err := holdCapacity(ctx, l, id, now.UnixNano())
		if err != nil {
			return out, fmt.Errorf("capacity room %s: %w", id, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func holdCapacity(ctx context.Context, l persistence.Log, id string, now int64) (RestoredCapacity, error) {
	t := capacity.New()
	apply := func(off int64, data []byte) {
		if e, err := capacity.DecodeEvent(data); err == nil {
			t.Apply(off, e)
		}
	}
	j := journal{log: l, stream: id, timeout: time.Minute}
	if err := j.recover(ctx, func(b []byte) error { return json.Unmarshal(b, t) }, func(off int64, data []byte) error {
		apply(off, data)
		return nil
	}); err != nil {
		return RestoredCapacity{}, err
	}
	t.Recovered(now)
	r := RestoredCapacity{ID: id, Inside: len(t.Inside), Waiting: len(t.Waiting())}
	evs := t.DecideRestore(now)
	evs[0].Epoch = j.epoch
	b, err := evs[0].Encode()
	if err != nil {
		return r, err
	}
	if err := j.commit([][]byte{b}, apply); err != nil {
		return r, err
	}
	r.Held = t.Held
	data, err := json.Marshal(t)
	if err != nil {
		return r, err
	}
	return r, l.SaveSnapshot(ctx, id, persistence.Snapshot{Offset: j.verified, Data: data})
}
