package node

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A room that stops leaves a snapshot covering every record it applied, so
// the next activation reads a tail of at most its final checkpoint, and
// retention may drop the rest.
func TestStoppedRoomLeavesItsSnapshot(t *testing.T) {
	l := memlog.New()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tailAfterStop := func(id string) int {
		t.Helper()
		snap, ok, err := l.LoadSnapshot(ctx, id)
		if err != nil || !ok {
			t.Fatalf("no snapshot after stop: %v %v", ok, err)
		}
		n := 0
		if _, err := l.Replay(ctx, id, snap.Offset, func(persistence.Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}

	n := startNode(t, l)
	cr := mustCreate(t, ctx, n, room.Config{Slug: "season", Name: "Season", RatePerMinute: 600, Active: true})
	for i := 0; i < 20; i++ {
		if _, err := n.Client.Join(ctx, cr.View.ID); err != nil {
			t.Fatal(err)
		}
	}
	n.Stop(ctx)
	if tail := tailAfterStop(cr.View.ID); tail > 1 {
		t.Fatalf("%d records after the snapshot of a stopped room, want at most the final checkpoint", tail)
	}

	// The next activation reads that tail, writes its marker, and covers
	// both when it stops, even with nothing else written.
	n = startNode(t, l)
	if _, err := n.Views.ByID(ctx, cr.View.ID); err != nil {
		t.Fatal(err)
	}
	n.Stop(ctx)
	if tail := tailAfterStop(cr.View.ID); tail > 1 {
		t.Fatalf("%d records after the snapshot of a room activated and stopped, want at most the final checkpoint", tail)
	}

	// A deleted room is covered too, so that retention drops its events.
	n = startNode(t, l)
	if err := n.Client.Admin(ctx, cr.View.ID, protocol.OpDelete, protocol.AdminRequest{Actor: "admin"}, nil); err != nil {
		t.Fatal(err)
	}
	n.Stop(ctx)
	if tail := tailAfterStop(cr.View.ID); tail != 0 {
		t.Fatalf("%d records after the snapshot of a deleted room, want none", tail)
	}
}
