package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// startNodeOlder is startNode with the cluster's older nodes given.
func startNodeOlder(t *testing.T, l persistence.Log, older func([]string) []string) *Node {
	t.Helper()
	return mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l, Older: older}})
}

// createAndStop creates a room with cfg on a member over l, stops the
// member gracefully and returns the room's id.
func createAndStop(t *testing.T, ctx context.Context, l persistence.Log, cfg room.Config) string {
	t.Helper()
	n := startNodeOlder(t, l, nil)
	cr := mustCreate(t, ctx, n, cfg)
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	n.Stop(stopCtx)
	stopCancel()
	return cr.View.ID
}

// While a node of the cluster does not announce modes, a room refuses to
// switch to sold out (409 conflict naming it) and keeps its line; a change
// that needs no feature goes through.
func TestConfigureWaitsForEveryNodeToAnnounce(t *testing.T) {
	older := func(needs []string) []string {
		if slices.Contains(needs, room.FeatureModes) {
			return []string{"front,actor 127.0.0.1:7001 (version dev, announces no features)"}
		}
		return nil
	}
	n := startNodeOlder(t, memlog.New(), older)
	defer n.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := room.Config{Slug: "roll", Name: "Roll", TargetURL: "https://shop.example.com/", RatePerMinute: 60, Active: true}
	sold := cfg
	sold.Mode = room.ModeSoldOut
	if _, err := n.Client.Create(ctx, sold, "admin"); !protocol.IsCode(err, protocol.CodeConflict) || !strings.Contains(err.Error(), "127.0.0.1:7001") {
		t.Fatalf("create sold out: got %v, want a conflict naming the older node", err)
	}
	cr := mustCreate(t, ctx, n, cfg)
	var v room.View
	err := n.Client.Admin(ctx, cr.View.ID, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &sold}, &v)
	if !protocol.IsCode(err, protocol.CodeConflict) || !strings.Contains(err.Error(), "modes") {
		t.Fatalf("configure sold out: got %v, want a conflict naming the feature", err)
	}
	if _, err := n.Client.Join(ctx, cr.View.ID); err != nil {
		t.Fatalf("join after the refused switch: %v (the room must still queue)", err)
	}
	cfg.RatePerMinute = 120
	if err := n.Client.Admin(ctx, cr.View.ID, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &cfg}, &v); err != nil {
		t.Fatalf("a change needing no feature: %v", err)
	}
}

// A member that finds in a room's log an event needing a feature it does
// not know refuses the room with room_unavailable naming the release it
// needs, instead of serving it without that event.
func TestUnreadableRoomIsRefused(t *testing.T) {
	l := memlog.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := createAndStop(t, ctx, l, room.Config{Slug: "later", Name: "Later", TargetURL: "https://shop.example.com/", RatePerMinute: 60, Active: true})
	// A newer release closed the room with a feature of its own.
	later := `{"v":1,"type":"configured","needs":{"waves":"0.9.0"},"at":1,"configured":{"config":{"slug":"later","name":"Later","targetUrl":"https://shop.example.com/","ratePerMinute":60,"active":true,"mode":"queue","waves":{"closed":true}}}}`
	if _, err := l.Append(ctx, id, []byte(later)); err != nil {
		t.Fatal(err)
	}
	n2 := startNodeOlder(t, l, nil)
	defer n2.Stop(context.Background())
	if _, err := n2.Client.Join(ctx, id); !protocol.IsCode(err, protocol.CodeRoomUnavailable) || !strings.Contains(err.Error(), "aditus-queue 0.9.0 or newer (feature waves)") {
		t.Fatalf("join: got %v, want room_unavailable naming 0.9.0 and waves", err)
	}
	var v room.View
	if err := n2.Client.Admin(ctx, id, protocol.OpGet, protocol.AdminRequest{Actor: "admin"}, &v); !protocol.IsCode(err, protocol.CodeRoomUnavailable) {
		t.Fatalf("get: got %v, want room_unavailable", err)
	}
}

// A room's snapshot names the features its state needs, as its events did;
// a member that does not know one refuses the room as for an event.
func TestSnapshotNeedsItsFeatures(t *testing.T) {
	l := memlog.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := createAndStop(t, ctx, l, room.Config{Slug: "snap", Name: "Snap", TargetURL: "https://shop.example.com/", RatePerMinute: 60, Active: true, Mode: room.ModeSoldOut})
	snap, ok, err := l.LoadSnapshot(ctx, id)
	if err != nil || !ok || !strings.Contains(string(snap.Data), `"needs":{"modes":"0.4.0"}`) {
		t.Fatalf("snapshot of a sold-out room: %v %v %s, want it to need modes", ok, err, snap.Data)
	}
	snap.Data = []byte(strings.Replace(string(snap.Data), `"needs":{"modes":"0.4.0"}`, `"needs":{"modes":"0.4.0","waves":"0.9.0"}`, 1))
	if err := l.SaveSnapshot(ctx, id, snap); err != nil {
		t.Fatal(err)
	}
	n2 := startNodeOlder(t, l, nil)
	defer n2.Stop(context.Background())
	if _, err := n2.Client.Join(ctx, id); !protocol.IsCode(err, protocol.CodeRoomUnavailable) || !strings.Contains(err.Error(), "aditus-queue 0.9.0 or newer (feature waves)") {
		t.Fatalf("join: got %v, want room_unavailable naming 0.9.0 and waves", err)
	}
}
