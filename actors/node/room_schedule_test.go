package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// The grain moves a room through its events as its clock passes their
// instants: the pre-queue arms the draw, the start draws and takes the
// event's rate, the end takes the end mode; each change once in the log,
// and a recovery finds the room where it was.
func TestGrainFollowsTheSchedule(t *testing.T) {
	l := memlog.New()
	clock := &skewClock{}
	n := startNodeAt(t, l, clock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := clock.Now().Add(time.Hour).UTC()
	pre := start.Add(-30 * time.Minute)
	cfg := room.Config{Slug: "schedule", Name: "Schedule", RatePerMinute: 60, Active: true, Events: []room.Period{
		{Name: "Main sale", StartsAt: start, EndsAt: start.Add(time.Hour), PrequeueFrom: &pre, RatePerMinute: 300, EndMode: room.ModeSoldOut}}}
	cr := mustCreate(t, ctx, n, cfg)
	id := cr.View.ID
	view := func(n *Node) *room.View {
		var v room.View
		if err := n.Client.Admin(ctx, id, protocol.OpGet, protocol.AdminRequest{Actor: "admin"}, &v); err != nil {
			t.Fatal(err)
		}
		return &v
	}
	phaseIs := func(n *Node, want room.Phase) {
		t.Helper()
		eventually(t, 10*time.Second, "phase "+want.Stage, func() bool { return view(n).Phase == want })
	}
	if v := view(n); v.Phase != (room.Phase{}) || v.Config.RatePerMinute != 60 {
		t.Fatalf("before the event: phase %+v rate %v", v.Phase, v.Config.RatePerMinute)
	}
	clock.Advance(30 * time.Minute)
	phaseIs(n, room.Phase{Event: 1, Stage: room.StagePrequeue})
	if view(n).Armed == nil {
		t.Fatal("no draw armed in the pre-queue")
	}
	for range 20 {
		if _, err := n.Client.Join(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(30 * time.Minute)
	phaseIs(n, room.Phase{Event: 1, Stage: room.StageLive})
	eventually(t, 10*time.Second, "the draw", func() bool { return len(view(n).Draws) == 1 })
	if v := view(n); v.Config.RatePerMinute != 300 || v.Line.Rate != 300 || v.Settings().RatePerMinute != 60 {
		t.Fatalf("in the event: rate %v line %v own %v", v.Config.RatePerMinute, v.Line.Rate, v.Settings().RatePerMinute)
	}
	clock.Advance(time.Hour)
	phaseIs(n, room.Phase{Event: 1, Stage: room.StageAfter})
	if v := view(n); v.Config.Mode != room.ModeSoldOut {
		t.Fatalf("after the event: mode %s", v.Config.Mode)
	}
	schedules := func(n *Node) int {
		var entries []room.AuditEntry
		if err := n.Client.Admin(ctx, id, protocol.OpAudit, protocol.AdminRequest{Actor: "admin"}, &entries); err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, e := range entries {
			if e.Actor == room.ActorSchedule && e.Action == "schedule" {
				k++
			}
		}
		return k
	}
	if got := schedules(n); got != 3 {
		t.Fatalf("schedule changes in the audit trail: got %d, want 3", got)
	}
	n.Stop(ctx)
	m := startNodeAt(t, l, clock)
	defer m.Stop(context.Background())
	if v := view(m); v.Phase != (room.Phase{Event: 1, Stage: room.StageAfter}) || v.Config.Mode != room.ModeSoldOut || len(v.Draws) != 1 {
		t.Fatalf("after a restart: phase %+v mode %s draws %d", v.Phase, v.Config.Mode, len(v.Draws))
	}
	if got := schedules(m); got != 3 {
		t.Fatalf("schedule changes after a restart: got %d, want 3", got)
	}
}

// A configuration written over a version other than the room's is refused
// as a conflict, and nothing changes.
func TestConfigureOverAStaleVersion(t *testing.T) {
	clock := &skewClock{}
	n := startNodeAt(t, memlog.New(), clock)
	defer n.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := room.Config{Slug: "stale", Name: "Stale", RatePerMinute: 60, Active: true}
	cr := mustCreate(t, ctx, n, cfg)
	read := cr.View.UpdatedAt
	cfg.Mode = room.ModeSoldOut
	var v room.View
	if err := n.Client.Admin(ctx, cr.View.ID, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &cfg, IfVersion: read}, &v); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	old := cfg
	old.Mode = room.ModeQueue
	err := n.Client.Admin(ctx, cr.View.ID, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &old, IfVersion: read}, &v)
	var ne *protocol.Error
	if !errors.As(err, &ne) || ne.Code != protocol.CodeConflict {
		t.Fatalf("write over the version read before: got %v, want a conflict", err)
	}
	if err := n.Client.Admin(ctx, cr.View.ID, protocol.OpGet, protocol.AdminRequest{Actor: "admin"}, &v); err != nil || v.Config.Mode != room.ModeSoldOut {
		t.Fatalf("after the refused write: mode %s (%v), want soldOut", v.Config.Mode, err)
	}
}
