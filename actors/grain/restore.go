package grain

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// DefaultMaxJoinsPerSecond is the rate the number jump after a restore
// assumes the lost node could have handed numbers out at: about thirty
// times the most one node was measured to issue (bench/RESULTS.md).
const DefaultMaxJoinsPerSecond = 1_000_000

// RestoredRoom is what a restore did to one room.
type RestoredRoom struct {
	ID, Slug string
	// Known is the highest number the image knew of; UpTo where the
	// numbers jumped (the next number is UpTo+1).
	Known, UpTo uint64
}

// JumpRestoredRooms prepares a log restored from a backup taken elapsed ago
// for serving: every live room the directory names is activated once, its
// numbers jump past all the lost node may have handed out since the backup
// (room.State.JumpAfterRestore at maxJoinsPerSecond), and a snapshot covers
// the jump. It must run before any node serves from the log, and only once
// the node the backup came from has stopped.
func JumpRestoredRooms(ctx context.Context, l persistence.Log, elapsed time.Duration, maxJoinsPerSecond float64, now time.Time) ([]RestoredRoom, error) {
	dir := &dirState{Slugs: map[string]string{}}
	dj := journal{log: l, stream: protocol.DirectoryID, timeout: time.Minute}
	if err := dj.recover(ctx, func(b []byte) error { return json.Unmarshal(b, dir) }, func(off int64, data []byte) error {
		dir.apply(off, data)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the directory: %w", err)
	}
	slugs := make([]string, 0, len(dir.Slugs))
	for slug := range dir.Slugs {
		slugs = append(slugs, slug)
	}
	sort.Strings(slugs)
	var out []RestoredRoom
	for _, slug := range slugs {
		r, ok, err := jumpRoom(ctx, l, dir.Slugs[slug], elapsed, maxJoinsPerSecond, now)
		if err != nil {
			return out, fmt.Errorf("room %s (%s): %w", slug, dir.Slugs[slug], err)
		}
		if ok {
			r.Slug = slug
			out = append(out, r)
		}
	}
	return out, nil
}

func jumpRoom(ctx context.Context, l persistence.Log, id string, elapsed time.Duration, maxJoinsPerSecond float64, now time.Time) (RestoredRoom, bool, error) {
	st := room.New(id)
	j := journal{log: l, stream: id, timeout: time.Minute}
	if err := j.recover(ctx, func(b []byte) error { return json.Unmarshal(b, st) }, func(off int64, data []byte) error {
		if e, err := room.DecodeEvent(data); err == nil {
			st.Apply(off, e)
		}
		return nil
	}); err != nil {
		return RestoredRoom{}, false, err
	}
	st.Recovered()
	if !st.Live() {
		return RestoredRoom{}, false, nil
	}
	r := RestoredRoom{ID: id, Known: max(st.Reserved, st.Issued)}
	r.UpTo = st.JumpAfterRestore(elapsed.Seconds(), maxJoinsPerSecond)
	evs := st.DecideJump(r.UpTo, now.Add(-elapsed).UnixNano(), now.UnixNano())
	b, err := evs[0].Encode()
	if err != nil {
		return r, false, err
	}
	if err := j.commit([][]byte{b}, func(off int64, data []byte) {
		if e, err := room.DecodeEvent(data); err == nil {
			st.Apply(off, e)
		}
	}); err != nil {
		return r, false, err
	}
	st.Recovered()
	data, err := json.Marshal(st)
	if err != nil {
		return r, false, err
	}
	if err := l.SaveSnapshot(ctx, id, persistence.Snapshot{Offset: j.verified, Data: data}); err != nil {
		return r, false, err
	}
	return r, true, nil
}
