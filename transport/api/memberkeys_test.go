package api

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// A member (not only a front) started with another master key than the
// one its log's rooms were sealed with does not serve them: the room's
// grain lives on it and cannot open the keys, and every route answers 503
// room_unavailable with Retry-After, as a front's does, and the gauge
// counts the room.
func TestMemberWithAnotherMasterKeyDoesNotServeTheRoom(t *testing.T) {
	clock := newStillClock()
	log := memlog.New()
	a := newWorld(t, log, clock)
	id, secret := a.createRoom("locked", 60)
	if st, j, _ := a.do("POST", "/queue/locked/join", "", nil); st != http.StatusOK {
		t.Fatalf("join: %d %v", st, j)
	}
	a.stop()

	other, err := seal.NewSealer(bytes.Repeat([]byte{7}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	b, err := node.Start(node.Config{Member: true, Deps: grain.Deps{Log: log,
		Sealer: other, Hash: sha, Logger: testLogger(), Metrics: grain.NewMetrics(reg), Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Stop(ctx)
	})
	bHTTP := serveNode(t, b, reg, clock)
	now := clock.Now()
	real, _, err := token.Mint([]byte(secret), "locked", 1, false, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lockedRoutes(forgeToken(nil, "locked", now), forgeTicket(nil, id, 1), real) {
		st, j, h := bHTTP.do(r.method, r.path, "", r.body)
		if st != http.StatusServiceUnavailable || j["error"] != protocol.CodeRoomUnavailable || h.Get("Retry-After") == "" {
			t.Errorf("member %s %s: %d %v (Retry-After %q), want 503 room_unavailable with Retry-After",
				r.method, r.path, st, j, h.Get("Retry-After"))
		}
	}
	if st, j, _ := bHTTP.do("GET", "/queue/healthz", "", nil); st != http.StatusOK || j["status"] != "degraded" || j["roomsUnavailable"] != float64(1) {
		t.Errorf("member healthz: %d %v, want degraded", st, j)
	}
	if got := gaugeValue(t, reg, "aditus_queue_rooms_unavailable"); got != 1 {
		t.Errorf("aditus_queue_rooms_unavailable %v, want 1", got)
	}
}
