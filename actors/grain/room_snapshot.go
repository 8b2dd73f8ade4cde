package grain

import (
	"context"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// How often a room snapshots. An activation reads the latest snapshot and
// the tail after it, so the tail is what the cadence bounds: a room
// snapshots once snapshotEvery records have been applied since the last
// one, or snapshotInterval after a change, whichever comes first; the tail
// an activation read counts as applied; and a grain that stops snapshots
// what it has applied. A busy room (a block reservation and a checkpoint a
// second, a few hundred joins per block) thus leaves at most 500 records,
// or 30 s of records, after its snapshot: activation reads a bounded tail
// whatever the room's age. It also bounds what retention must keep: the
// logs drop what snapshots cover (persistence.Log), and Kafka drops by age
// alone, so every record must be covered within the window.

// finalSnapshot saves the state applied so far when records were applied
// since the last snapshot, on the grain's way out, bounded in time. A
// superseded activation leaves it to the newer one.
func (g *roomGrain) finalSnapshot() {
	if !g.ready || g.stopped || g.sinceSnap == 0 {
		return
	}
	data, err := encodeSnapshot(g.st)
	if err != nil {
		g.log.Error("encode snapshot", "error", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.deps.WriteTimeout)
	defer cancel()
	if err := g.deps.Log.SaveSnapshot(ctx, g.id, persistence.Snapshot{Offset: g.writes.j.verified, Data: data}); err != nil {
		g.log.Warn("final snapshot failed", "error", err)
		return
	}
	g.sinceSnap = 0
}
