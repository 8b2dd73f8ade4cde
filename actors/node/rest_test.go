package node

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// restCounter is a slog handler that counts the grains' "resting" records
// (rest.go logs one whenever a gone room's ticker stops) and drops the rest.
type restCounter struct{ n *atomic.Int64 }

func (h restCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h restCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h restCounter) WithGroup(string) slog.Handler            { return h }
func (h restCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "resting") {
		h.n.Add(1)
	}
	return nil
}

// A deleted room stops ticking once it has been left alone for RestAfter,
// and a request wakes it; a live room next to it goes on ticking. The
// test steps the clock and waits for events: the live room's ticks show
// that time has been seen by the grains, and each rest is logged.
func TestGoneRoomRests(t *testing.T) {
	clock := &skewClock{}
	rests := new(atomic.Int64)
	n := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Now: clock.Now,
		Logger: slog.New(restCounter{rests})}})
	defer n.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ids []string
	for _, slug := range []string{"stays", "goes"} {
		cr := mustCreate(t, ctx, n, room.Config{Slug: slug, Name: slug, RatePerMinute: 60, Active: true})
		ids = append(ids, cr.View.ID)
	}
	live, gone := ids[0], ids[1]
	del := func() error {
		var v room.View
		return n.Client.Admin(ctx, gone, protocol.OpDelete, protocol.AdminRequest{Actor: "admin"}, &v)
	}
	if err := del(); err != nil {
		t.Fatal(err)
	}
	// Not before RestAfter has passed since its last request: the clock
	// moves to just short of it, in steps the live room's ticks confirm
	// (both grains tick on the same schedule).
	for range 5 {
		clock.Advance((grain.RestAfter - 5*time.Second) / 5)
		ticked(t, ctx, n, live, clock)
	}
	if got := rests.Load(); got != 0 {
		t.Fatalf("%d rests before grain.RestAfter had passed since the delete", got)
	}
	clock.Advance(10 * time.Second)
	eventually(t, 10*time.Second, "the deleted room to rest", func() bool { return rests.Load() == 1 })

	// A request wakes it, and it answers as a deleted room does; its
	// ticker runs again, so it rests again RestAfter later.
	if err := del(); !protocol.IsCode(err, protocol.CodeNotFound) {
		t.Fatalf("delete of a deleted room: got %v, want not found", err)
	}
	clock.Advance(grain.RestAfter + time.Second)
	eventually(t, 10*time.Second, "the woken room to rest again", func() bool { return rests.Load() == 2 })
	if _, err := n.Client.Join(ctx, live); err != nil {
		t.Fatalf("join of the live room: %v", err)
	}
	ticked(t, ctx, n, live, clock)
}
