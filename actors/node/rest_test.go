package node

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// roomTickers counts the room grains' ticker goroutines in this process.
func roomTickers() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "(*roomGrain).startTicker.func1(")
}

// A deleted room stops ticking once it has been left alone for restAfter,
// and a request wakes it; a live room next to it goes on ticking.
func TestGoneRoomRests(t *testing.T) {
	clock := &skewClock{}
	n := startNodeAt(t, memlog.New(), clock)
	defer n.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before := roomTickers()
	var ids []string
	for _, slug := range []string{"stays", "goes"} {
		cr, err := n.Client.Create(ctx, room.Config{Slug: slug, Name: slug, RatePerMinute: 60, Active: true}, "admin")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cr.View.ID)
	}
	eventually(t, 10*time.Second, "two more room tickers", func() bool { return roomTickers() == before+2 })
	var v room.View
	if err := n.Client.Admin(ctx, ids[1], OpDelete, AdminRequest{Actor: "admin"}, &v); err != nil {
		t.Fatal(err)
	}
	// Not before restAfter has passed since its last request.
	time.Sleep(500 * time.Millisecond)
	if got := roomTickers(); got != before+2 {
		t.Fatalf("tickers right after the delete: got %d, want %d", got, before+2)
	}
	clock.Advance(restAfter + time.Second)
	eventually(t, 10*time.Second, "the deleted room to rest", func() bool { return roomTickers() == before+1 })

	// A request wakes it, and it answers as a deleted room does.
	err := n.Client.Admin(ctx, ids[1], OpDelete, AdminRequest{Actor: "admin"}, &v)
	if !IsCode(err, CodeNotFound) {
		t.Fatalf("delete of a deleted room: got %v, want not found", err)
	}
	eventually(t, 10*time.Second, "the woken room to tick", func() bool { return roomTickers() == before+2 })
	if _, err := n.Client.Join(ctx, ids[0]); err != nil {
		t.Fatalf("join of the live room: %v", err)
	}
}

func TestTickPeriod(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	st := room.New("r")
	st.Exists = true
	g := &roomGrain{st: st}
	g.pace.heardAt = time.Now()
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a room just asked: %v, want %v", got, tickInterval)
	}
	g.pace.heardAt = time.Now().Add(-quietAfter - time.Second)
	if got := g.tickPeriod(now); got != quietTick {
		t.Errorf("a room nobody asked for a minute: %v, want %v", got, quietTick)
	}
	g.dirty = true
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a quiet room with a view to publish: %v, want %v", got, tickInterval)
	}
	g.dirty, g.writes.writing = false, true
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a quiet room writing: %v, want %v", got, tickInterval)
	}
	g.writes.writing = false
	opens := now.Add(time.Second)
	st.Config.OpensAt = &opens
	st.Armed = &room.Arm{}
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a quiet room opening in a second: %v, want %v", got, tickInterval)
	}
}
