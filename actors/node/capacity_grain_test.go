package node

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// capacityShop is the set-up of a capacity grain test: a deadline for the
// whole test, an empty log for its members, the id of the shop's capacity
// room, and its settings of active slots, a one-minute session and a
// ten-second refresh.
func capacityShop(t *testing.T, active int) (context.Context, *memlog.Log, string, capacity.Settings) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	s := capacity.Settings{Active: active, Session: time.Minute, Refresh: 10 * time.Second}
	return ctx, memlog.New(), protocol.CapacityID("shop.example.com", "/"), s
}

// TestCapacityGrainSurvivesRestart fills a capacity room on one member,
// stops it, and checks that a new member on the same log keeps every slot
// holder inside, the line in its order, and the cookie key.
func TestCapacityGrainSurvivesRestart(t *testing.T) {
	ctx, l, id, s := capacityShop(t, 2)

	n := startNode(t, l)
	key, err := n.Client.CapacityKey(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sealer.Open(key, protocol.CapacityKeyAD(id)); err != nil {
		t.Fatalf("key does not open under the master key: %v", err)
	}
	for i, v := range []string{"a", "b", "c", "d"} {
		st, err := n.Client.CapacityCheck(ctx, id, s, v)
		if err != nil {
			t.Fatal(err)
		}
		if want := i < 2; st.Admitted != want {
			t.Fatalf("%s admitted=%v, want %v", v, st.Admitted, want)
		}
	}
	if _, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{Visitors: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Client.CapacityCheck(ctx, id, capacity.Settings{}, "x"); !protocol.IsCode(err, protocol.CodeInvalid) {
		t.Fatalf("check without settings: got %v, want invalid", err)
	}
	n.Stop(ctx)

	n = startNode(t, l)
	defer n.Stop(ctx)
	for v, want := range map[string]capacity.Status{
		"a": {Admitted: true, Waiting: 2, Inside: 2},
		"b": {Admitted: true, Waiting: 2, Inside: 2},
		"c": {Position: 1, Waiting: 2, Inside: 2},
		"d": {Position: 2, Waiting: 2, Inside: 2},
	} {
		st, err := n.Client.CapacityCheck(ctx, id, s, v)
		if err != nil {
			t.Fatal(err)
		}
		st.Expires = 0
		if st != want {
			t.Errorf("%s after restart: got %+v, want %+v", v, st, want)
		}
	}
	if err := n.Client.CapacityRelease(ctx, id, "a"); err != nil {
		t.Fatal(err)
	}
	if st, _ := n.Client.CapacityCheck(ctx, id, s, "c"); !st.Admitted {
		t.Fatalf("first in line not admitted after a release: %+v", st)
	}
	key2, err := n.Client.CapacityKey(ctx, id)
	if err != nil || !bytes.Equal(key, key2) {
		t.Fatalf("cookie key changed across the restart: %v", err)
	}
}
