package grain_test

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// On a running node, a room whose stream is damaged answers room_unavailable
// saying its history is damaged, and joins there are refused the same way;
// the other rooms of the node serve.
func TestDamagedRoomFailsAlone(t *testing.T) {
	dir, ids := grain.DamagedSeason(t)
	l, err := filelog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := nodetest.Start(t, node.Config{Member: true, Deps: grain.Deps{Log: l}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.Views.ByID(ctx, ids[0]); protocol.Unavailable(err) != protocol.ErrRoomDamaged {
		t.Fatalf("view of the damaged room: %v, want %v", err, protocol.ErrRoomDamaged)
	}
	if _, err := n.Client.Join(ctx, ids[0]); !protocol.IsDamaged(err) {
		t.Fatalf("join in the damaged room: %v, want %v", err, protocol.ErrRoomDamaged)
	}
	for _, id := range ids[1:] {
		r, err := n.Views.ByID(ctx, id)
		if err != nil || !r.View.Exists {
			t.Fatalf("room %s beside the damaged one: %+v %v", id, r, err)
		}
	}
	if _, err := n.Client.Join(ctx, ids[2]); err != nil {
		t.Fatalf("join beside the damaged room: %v", err)
	}
}
