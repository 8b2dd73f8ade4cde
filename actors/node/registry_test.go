package node

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A report stands for InstanceTTL; a node that stops reporting drops out,
// one that leaves goes at once, and the list is sorted by id.
func TestRegistryDropsSilentNodes(t *testing.T) {
	clock := &skewClock{}
	n := startNodeAt(t, memlog.New(), clock)
	defer n.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range []string{"b", "a", "c"} {
		if err := n.Client.Report(ctx, protocol.Instance{ID: id, Roles: []string{"front"}, Goroutines: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Client.Report(ctx, protocol.Instance{}); !protocol.IsCode(err, protocol.CodeInvalid) {
		t.Fatalf("report without an id: got %v, want invalid", err)
	}
	list, err := n.Client.Instances(ctx)
	if err != nil || len(list) != 3 || list[0].ID != "a" || list[2].ID != "c" || list[1].Goroutines != 3 || list[1].ReportedAt.IsZero() {
		t.Fatalf("got %+v %v, want a, b, c", list, err)
	}
	if err := n.Client.Leave(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(protocol.InstanceTTL / 2)
	if err := n.Client.Report(ctx, protocol.Instance{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(protocol.InstanceTTL/2 + time.Second)
	if list, err := n.Client.Instances(ctx); err != nil || len(list) != 1 || list[0].ID != "c" {
		t.Fatalf("after a left and %v of silence from a: got %+v %v, want c alone", protocol.InstanceTTL, list, err)
	}
}
