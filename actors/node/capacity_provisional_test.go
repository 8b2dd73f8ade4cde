package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// streamLen counts the records of stream in l.
func streamLen(t *testing.T, l *memlog.Log, stream string) int {
	t.Helper()
	n := 0
	if _, err := l.Replay(context.Background(), stream, -1, func(persistence.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCapacityGrainProvisionalPlaces sends first requests to a full room
// through the grain: they are told an estimate and write nothing; a
// return confirms the place in its order of arrival, with one write.
func TestCapacityGrainProvisionalPlaces(t *testing.T) {
	ctx, l, id, s := capacityShop(t, 1)
	n := startNode(t, l)
	defer n.Stop(ctx)
	if st, err := n.Client.CapacityArrive(ctx, id, s, "in"); err != nil || !st.Admitted {
		t.Fatalf("first visitor of an empty room: %+v %v", st, err)
	}
	if _, err := n.Client.CapacityCheck(ctx, id, s, "w1"); err != nil {
		t.Fatal(err)
	}
	arrived := time.Now().UnixNano()
	before := streamLen(t, l, id)
	for i := 0; i < 50; i++ {
		st, err := n.Client.CapacityArrive(ctx, id, s, fmt.Sprint("ghost", i))
		if err != nil {
			t.Fatal(err)
		}
		if st.Arrived < arrived || st.Arrived > time.Now().UnixNano() {
			t.Fatalf("first request %d: arrived %d, want the room's time of it", i, st.Arrived)
		}
		st.Arrived = 0
		if want := (capacity.Status{Position: 2, Waiting: 2, Inside: 1, Provisional: true}); st != want {
			t.Fatalf("first request %d: got %+v, want %+v", i, st, want)
		}
	}
	if got := streamLen(t, l, id); got != before {
		t.Fatalf("50 provisional places wrote %d records", got-before)
	}
	if _, err := n.Client.CapacityCheck(ctx, id, s, "w2"); err != nil {
		t.Fatal(err)
	}
	st, err := n.Client.CapacityConfirm(ctx, id, s, "ghost7", arrived)
	if err != nil {
		t.Fatal(err)
	}
	if st.Position != 2 || st.Waiting != 3 || st.Provisional {
		t.Fatalf("confirmed place: got %+v, want 2 of 3", st)
	}
	if got := streamLen(t, l, id); got != before+2 {
		t.Fatalf("w2's arrival and ghost7's return wrote %d records, want 2", got-before)
	}
	if st, _ := n.Client.CapacityCheck(ctx, id, s, "w2"); st.Position != 3 {
		t.Fatalf("w2, who came after ghost7's first request, at %d, want 3", st.Position)
	}
}
