package node

import (
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// A capacity room restored from a log: the inside keep their slots, the
// line its order, and the slot the image saw free is held for a session,
// as the lost node may have given it.
func TestHoldRestoredCapacity(t *testing.T) {
	ctx, l, id, s := capacityShop(t, 3)
	n := startNode(t, l)
	for _, v := range []string{"a", "b"} {
		if st, err := n.Client.CapacityCheck(ctx, id, s, v); err != nil || !st.Admitted {
			t.Fatalf("%s: %+v %v", v, st, err)
		}
	}
	n.Stop(ctx)

	held, err := grain.HoldRestoredCapacity(ctx, l, []string{protocol.DirectoryID, id, "r-not-capacity"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || held[0].ID != id || held[0].Inside != 2 || held[0].Held != 1 {
		t.Fatalf("restore of the capacity rooms: %+v", held)
	}
	n = startNode(t, l)
	defer n.Stop(ctx)
	if st, err := n.Client.CapacityCheck(ctx, id, s, "y"); err != nil || st.Admitted || st.Position != 1 {
		t.Fatalf("a new visitor after the restore: %+v %v, want the line while the free slot is held", st, err)
	}
	for _, v := range []string{"a", "b"} {
		if st, err := n.Client.CapacityCheck(ctx, id, s, v); err != nil || !st.Admitted {
			t.Fatalf("%s after the restore: %+v %v", v, st, err)
		}
	}
}
