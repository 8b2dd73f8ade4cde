package node

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A front node (a cluster client) stops, gracefully or not, without
// panicking (protoactor's Cluster.Shutdown does for a client), while the
// member it called keeps serving.
func TestFrontNodeStops(t *testing.T) {
	if raceEnabled {
		t.Skip("a member and a front in one process race inside gRPC's global logger under -race; this test runs without -race")
	}
	health := testbin.FreeAddr(t)
	deps := grain.Deps{Log: memlog.New(), Logger: startNodeLogger()}
	member := mustStart(t, Config{Member: true, HealthAddr: health, Peers: []string{health}, Deps: deps})
	stopNode(t, member)
	for _, graceful := range []bool{true, false} {
		front := mustStart(t, Config{Peers: []string{health}, Deps: deps})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if _, err := front.Client.List(ctx); err != nil {
			t.Fatalf("the front reaches no member: %v", err)
		}
		if graceful {
			front.Stop(ctx)
		} else {
			front.Kill()
		}
		if _, err := member.Client.List(ctx); err != nil {
			t.Fatalf("the member after the front stopped (graceful %v): %v", graceful, err)
		}
		cancel()
	}
}
