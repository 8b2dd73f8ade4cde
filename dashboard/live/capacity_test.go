package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/dashboard/live"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// A capacity room's socket pushes its state every second: the gauges
// move as visitors arrive, a runtime change of active shows in the next
// frames with the difference from the file, and a room's key (bound to a
// rate room) is refused, as is an id no proxy has served.
func TestLiveCapacityFrames(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := e.Node.Client
	id := protocol.CapacityID("shop.example.com", "/")
	s := capacity.Settings{Active: 2, Session: time.Minute, Refresh: 10 * time.Second}
	if _, err := cl.CapacityTouch(ctx, id, protocol.CapacityTouch{Settings: s, Host: "shop.example.com", Name: "/",
		Report: &capacity.NodeReport{Node: "proxy-1", Refusals: 4}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if _, err := cl.CapacityCheck(ctx, id, s, v); err != nil {
			t.Fatal(err)
		}
	}
	c := e.dial(id, "", adminws.Subprotocol, "bearer."+adminTok)
	f := readJSON[live.CapacityFrame](t, c)
	if f.Type != "capacity" || f.ID != id || f.Host != "shop.example.com" || f.Inside != 2 || f.Waiting != 1 ||
		f.Settings.Active != 2 || f.AdmittedPerMinute != 2 || f.Refusals != 4 || len(f.Nodes) != 1 || len(f.Differs) != 0 {
		t.Fatalf("first frame: %+v", f)
	}
	five := 5
	if _, err := cl.CapacityAdjust(ctx, id, capacity.Adjust{Active: &five}, "admin"); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		f = readJSON[live.CapacityFrame](t, c)
		if f.Settings.Active == 5 {
			break
		}
		if i > 3 {
			t.Fatalf("active 5 not pushed within %d frames: %+v", i, f.Settings)
		}
	}
	if f.File.Active != 2 || len(f.Differs) != 1 || f.Differs[0] != "active" || f.Runtime.Version != 1 {
		t.Fatalf("after the change: %+v", f)
	}

	rate := e.CreateRoom("other", 1)
	key := e.CreateKey(rate)
	if got := closeCode(t, e.dial(id, "", adminws.Subprotocol, "bearer."+key)); got != adminws.CloseForbidden {
		t.Fatalf("a rate room's key on a capacity room: close %d, want %d", got, adminws.CloseForbidden)
	}
	unknown := protocol.CapacityID("nobody.example.com", "/")
	if got := closeCode(t, e.dial(unknown, "", adminws.Subprotocol, "bearer."+adminTok)); got != adminws.CloseNotFound {
		t.Fatalf("a capacity id no proxy served: close %d, want %d", got, adminws.CloseNotFound)
	}
}
