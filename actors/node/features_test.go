package node

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// skewClock is the real clock moved forward by a settable amount: grains
// tick in real time, but decide in the time it tells.
type skewClock struct{ skew atomic.Int64 }

func (c *skewClock) Now() time.Time          { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *skewClock) Advance(d time.Duration) { c.skew.Add(int64(d)) }

func startNodeAt(t *testing.T, l persistence.Log, clock *skewClock) *Node {
	t.Helper()
	return mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l, Now: clock.Now}})
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, d, what, cond)
}

// ticked waits until room id's grain on n has ticked at the clock's
// current second or later: its dashboard sample of that second exists.
// The grain samples, and looks for abandoned numbers, on its tick.
func ticked(t *testing.T, ctx context.Context, n *Node, id string, clock *skewClock) {
	t.Helper()
	want := clock.Now().Unix()
	eventually(t, 10*time.Second, "a tick at the advanced clock", func() bool {
		r, err := n.Client.Stats(ctx, id, want-1)
		return err == nil && len(r.History) > 0 && r.History[len(r.History)-1].T >= want
	})
}

// Presence reported to a front node (heartbeats, sockets) reaches the grain
// in the sync, and the grain moves the window over the silent numbers only.
// After a restart nobody is counted before a grace period has passed again,
// and the count survives.
func TestAbandonDetectionInTheGrain(t *testing.T) {
	l := memlog.New()
	clock := &skewClock{}
	n := startNodeAt(t, l, clock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := room.Config{Slug: "abandon", Name: "Abandon", RatePerMinute: 60, Active: true,
		Abandon: room.Abandon{Enabled: true, GraceSeconds: 60}}
	cr := mustCreate(t, ctx, n, cfg)
	id := cr.View.ID
	const joins = 300
	for range joins {
		if _, err := n.Client.Join(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	view := func(n *Node) *room.View {
		r, err := n.Views.ByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.View
	}
	view(n) // in use on this front: synced every second
	// Even numbers stay (their page reports presence), odd ones are gone.
	// Time runs twenty times faster than the sync, so the even numbers are
	// seen about every twenty seconds of room time.
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			for k := uint64(2); k <= joins; k += 2 {
				n.Views.Seen(id, k)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for range 80 {
		clock.Advance(time.Second)
		ticked(t, ctx, n, id, clock)
	}
	eventually(t, 10*time.Second, "abandoned numbers counted", func() bool { return view(n).Abandoned > 0 })
	stop.Store(true)
	wg.Wait()
	// Scans go on after the reports stop (each counted number brings a new
	// one into view), so the count may still grow until the stop.
	v := view(n)
	// The scans examined positions up to about serving + 3 s of the rate;
	// only odd numbers may be among the counted ones.
	now := clock.Now().UnixNano()
	serving := v.Serving(now)
	if v.Abandoned > (serving-5)/2+1 {
		t.Fatalf("%d abandoned with serving at %d: more than the odd numbers the window reached", v.Abandoned, serving)
	}
	t.Logf("%d abandoned, serving %d", v.Abandoned, serving)
	before := v.Abandoned

	// Restart on the same log: the count survives, and the new activation,
	// which has seen nobody yet, counts nobody for a grace period.
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	t0 := time.Now()
	n.Stop(stopCtx)
	stopCancel()
	t.Logf("stop took %v", time.Since(t0))
	n2 := startNodeAt(t, l, clock)
	defer n2.Stop(context.Background())
	if _, err := n2.Client.Join(ctx, id); err != nil {
		t.Fatal(err)
	}
	v2 := view(n2)
	if v2.Abandoned < before {
		t.Fatalf("after restart: %d abandoned, want at least the %d counted before", v2.Abandoned, before)
	}
	before = v2.Abandoned
	// Fifty seconds of room time, each second seen by the grain's tick
	// (which scans every two): nobody may be counted in them.
	for range 50 {
		clock.Advance(time.Second)
		ticked(t, ctx, n2, id, clock)
	}
	if v := view(n2); v.Abandoned != before {
		t.Fatalf("%d abandoned 50 s after the restart with nobody reporting, want still %d", v.Abandoned, before)
	}
	clock.Advance(20 * time.Second)
	eventually(t, 10*time.Second, "abandoned counted a grace period after the restart", func() bool {
		return view(n2).Abandoned > before
	})
}

// Bypass redemptions are acknowledged only once they stand in the log: the
// usage count survives a restart, and the limit holds across it.
func TestBypassUsesSurviveRestart(t *testing.T) {
	l := memlog.New()
	n := startNode(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cr := mustCreate(t, ctx, n, room.Config{Slug: "vip", Name: "VIP", TargetURL: "https://shop.example.com/",
		RatePerMinute: 60, Active: true})
	id := cr.View.ID
	limit := 3
	var ci protocol.CodeInfo
	if err := n.Client.Admin(ctx, id, protocol.OpCodeAdd, protocol.AdminRequest{Actor: "admin", Label: "Press", Limit: &limit}, &ci); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := n.Client.Redeem(ctx, id, ci.Code); err != nil {
			t.Fatalf("redemption %d: %v", i+1, err)
		}
	}
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	n.Stop(stopCtx)
	stopCancel()

	n2 := startNode(t, l)
	defer n2.Stop(context.Background())
	var codes []protocol.CodeInfo
	if err := n2.Client.Admin(ctx, id, protocol.OpCodeList, protocol.AdminRequest{Actor: "admin"}, &codes); err != nil {
		t.Fatal(err)
	}
	if len(codes) != 1 || codes[0].Uses != 2 {
		t.Fatalf("after restart: %+v, want one code used twice", codes)
	}
	tok, err := n2.Client.Redeem(ctx, id, ci.Code)
	if err != nil {
		t.Fatalf("third redemption after restart: %v", err)
	}
	if tok.Number != 0 {
		t.Fatalf("bypass token for number %d, want 0", tok.Number)
	}
	if _, err := n2.Client.Redeem(ctx, id, ci.Code); !protocol.IsCode(err, protocol.CodeNoCode) {
		t.Fatalf("fourth redemption of a three-use code: got %v, want no code", err)
	}
}
