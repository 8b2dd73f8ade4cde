package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// TestCapacityGrainPowAuto runs the automatic proof of work through the
// grain on a skewed clock: first requests over pow_auto's threshold turn
// it on, answers carry the bits, the challenged arrivals that proxies
// report keep it on, a new member on the same log goes on from the level
// written, and a calm lifts it.
func TestCapacityGrainPowAuto(t *testing.T) {
	ctx, l, id, s := capacityShop(t, 1)
	s.Pow = capacity.PowAuto{PerMinute: 60, Bits: 4}
	clock := &skewClock{}
	n := startNodeAt(t, l, clock)
	if _, err := n.Client.CapacityArrive(ctx, id, s, "in"); err != nil {
		t.Fatal(err)
	}
	var st capacity.Status
	for i := range 100 {
		clock.Advance(10 * time.Millisecond)
		var err error
		if st, err = n.Client.CapacityArrive(ctx, id, s, fmt.Sprint("ghost", i)); err != nil {
			t.Fatal(err)
		}
	}
	if st.Pow < 4 {
		t.Fatalf("after 100 arrivals a second: pow %d, want at least 4", st.Pow)
	}
	bits := st.Pow
	// Proxies now answer challenges instead; their reports keep it on.
	for range 40 {
		clock.Advance(time.Second)
		a, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{Challenged: 100})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Pow; got < bits {
			t.Fatalf("pow %d while 100 challenged arrivals a second are reported, want at least %d", got, bits)
		}
	}
	n.Stop(ctx)

	n = startNodeAt(t, l, clock)
	defer n.Stop(ctx)
	if st, err := n.Client.CapacityCheck(ctx, id, s, "in"); err != nil || st.Pow < bits {
		t.Fatalf("after a restart: %+v %v, want pow at least %d", st, err, bits)
	}
	for range 40 {
		clock.Advance(time.Second)
		if _, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := n.Client.CapacityTouch(ctx, id, protocol.CapacityTouch{}); err != nil || got.Pow != 0 {
		t.Fatalf("after 40 calm seconds: pow %d %v, want 0", got.Pow, err)
	}
}
