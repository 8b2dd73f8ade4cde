package node

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// A runtime change is in the room's log: a member started on the same log
// after a restart, and one started after a restore of that log, run the
// room as changed, show the difference from the file, and keep the audit
// entry. A proxy sending the file's settings again changes nothing.
func TestCapacityRuntimeSurvivesRestartAndRestore(t *testing.T) {
	ctx, l, id, s := capacityShop(t, 1)
	n := startNode(t, l)
	if _, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{Settings: s, Host: "shop.example.com", Name: "/"}); err != nil {
		t.Fatal(err)
	}
	three, yes := 3, true
	if _, err := n.Client.CapacityAdjust(ctx, id, capacity.Adjust{Active: &three, Paused: &yes}, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Client.CapacityAdjust(ctx, id, capacity.Adjust{Version: 0, Active: &three}, "admin"); !protocol.IsCode(err, protocol.CodeConflict) {
		t.Fatalf("a stale change: %v, want conflict", err)
	}
	zero := 0
	if _, err := n.Client.CapacityAdjust(ctx, id, capacity.Adjust{Version: 1, Active: &zero}, "admin"); !protocol.IsCode(err, protocol.CodeInvalid) {
		t.Fatalf("active 0: %v, want invalid", err)
	}
	check := func(when string, n *Node) {
		t.Helper()
		a, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{Settings: s, Host: "shop.example.com", Name: "/"})
		if err != nil || a.Settings.Active != 3 || !a.Paused || a.Version != 1 {
			t.Fatalf("%s: touch answer %+v %v", when, a, err)
		}
		st, err := n.Client.CapacityState(ctx, id)
		if err != nil || st.File.Active != 1 || !slices.Equal(st.Differs, []string{"active", "paused"}) ||
			len(st.Audit) != 1 || st.Audit[0].Actor != "admin" || st.Host != "shop.example.com" {
			t.Fatalf("%s: state %+v %v", when, st, err)
		}
		if c, err := n.Client.CapacityCheck(ctx, id, s, "new"); err != nil || c.Admitted {
			t.Fatalf("%s: a new visitor of a paused room: %+v %v", when, c, err)
		}
	}
	check("before a restart", n)
	n.Stop(ctx)
	n = startNode(t, l)
	check("after a restart", n)
	n.Stop(ctx)
	if _, err := grain.HoldRestoredCapacity(ctx, l, []string{id}, time.Now()); err != nil {
		t.Fatal(err)
	}
	n = startNode(t, l)
	defer n.Stop(ctx)
	check("after a restore", n)
}

// The index lists what proxies announce, refuses ids that are not the
// room's and keeps at most protocol.MaxCapacityRooms.
func TestCapacityIndexBounded(t *testing.T) {
	ctx, l, _, _ := capacityShop(t, 1)
	n := startNode(t, l)
	defer n.Stop(ctx)
	rooms := []protocol.CapacityRoom{{ID: "c00", Host: "forged", Name: "/"}}
	for i := range protocol.MaxCapacityRooms + 3 {
		name := "/r" + string(rune('a'+i%26)) + time.Duration(i).String()
		rooms = append(rooms, protocol.CapacityRoom{ID: protocol.CapacityID("shop.example.com", name), Host: "shop.example.com", Name: name})
	}
	if err := n.Client.CapacityAnnounce(ctx, rooms); err != nil {
		t.Fatal(err)
	}
	l2, err := n.Client.CapacityRooms(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(l2.Rooms) != protocol.MaxCapacityRooms || l2.Refused != 4 {
		t.Fatalf("%d rooms listed, %d refused; want %d and 4", len(l2.Rooms), l2.Refused, protocol.MaxCapacityRooms)
	}
}

// Restoring yesterday's backup: the room comes back with the runtime
// values of the backup's moment (not the file's, not the later change),
// and still marks what differs from the file.
func TestCapacityRuntimeOfTheBackup(t *testing.T) {
	ctx, _, id, s := capacityShop(t, 1)
	live, backup := t.TempDir(), t.TempDir()
	adjust := func(dir string, active int, version int64) {
		t.Helper()
		l, err := filelog.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := startNode(t, l)
		if _, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{Settings: s, Host: "shop.example.com", Name: "/"}); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Client.CapacityAdjust(ctx, id, capacity.Adjust{Version: version, Active: &active}, "admin"); err != nil {
			t.Fatal(err)
		}
		n.Stop(ctx)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	adjust(live, 3, 0)
	if err := os.CopyFS(backup, os.DirFS(live)); err != nil { // the backup, taken then
		t.Fatal(err)
	}
	adjust(live, 5, 1) // a change after the backup
	l, err := filelog.Open(backup)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if _, err := grain.HoldRestoredCapacity(ctx, l, []string{id}, time.Now()); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, l)
	defer n.Stop(ctx)
	a, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{Settings: s, Host: "shop.example.com", Name: "/"})
	if err != nil || a.Settings.Active != 3 || a.Version != 1 {
		t.Fatalf("after the restore: %+v %v, want active 3 at version 1 (the backup's)", a, err)
	}
	st, err := n.Client.CapacityState(ctx, id)
	if err != nil || !slices.Equal(st.Differs, []string{"active"}) || st.File.Active != 1 || len(st.Audit) != 1 {
		t.Fatalf("after the restore: %+v %v", st, err)
	}
}
