package api

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

func newTestBudgets(t *testing.T) (*joinBudgets, *stillClock, *prometheus.Registry) {
	t.Helper()
	clock, reg := newStillClock(), prometheus.NewRegistry()
	return newJoinBudgets(reg, clock.Now), clock, reg
}

// refusals reads the refusal counter of one outcome from reg.
func refusals(t *testing.T, reg prometheus.Gatherer, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "aditus_queue_address_budget_refusals_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestBudgetTake: an address spends its burst, is refused with the wait
// until its next token, gets that token after exactly that wait, and never
// touches another address's budget.
func TestBudgetTake(t *testing.T) {
	b, clock, reg := newTestBudgets(t)
	cfg := room.AddressBudget{PerMinute: 6, Burst: 3}
	for i := range 3 {
		if ok, _ := b.take("r1", cfg, "192.0.2.1"); !ok {
			t.Fatalf("join %d of the burst refused", i+1)
		}
	}
	ok, wait := b.take("r1", cfg, "192.0.2.1")
	if ok || wait != 10*time.Second {
		t.Fatalf("over budget: got %v, wait %v; want refused, 10s (6 a minute)", ok, wait)
	}
	if ok, _ := b.take("r1", cfg, "192.0.2.2"); !ok {
		t.Fatal("another address refused")
	}
	if ok, _ := b.take("r2", cfg, "192.0.2.1"); !ok {
		t.Fatal("the same address refused in another room")
	}
	clock.Advance(wait - time.Millisecond)
	if ok, _ := b.take("r1", cfg, "192.0.2.1"); ok {
		t.Fatal("a token before the wait was over")
	}
	clock.Advance(time.Millisecond)
	if ok, _ := b.take("r1", cfg, "192.0.2.1"); !ok {
		t.Fatal("no token after the wait announced")
	}
	if got := refusals(t, reg, "refused"); got != 2 {
		t.Fatalf("refusals counted: got %v, want 2", got)
	}
}

// TestBudgetDefaultsAndChange: a room whose configuration has no budget
// gets the default one, and a changed budget applies from the next join.
func TestBudgetDefaultsAndChange(t *testing.T) {
	b, _, _ := newTestBudgets(t)
	taken := func(cfg room.AddressBudget, key string) int {
		n := 0
		for n < 2*room.MaxBudgetBurst {
			if ok, _ := b.take("r1", cfg, key); !ok {
				return n
			}
			n++
		}
		return n
	}
	if got := taken(room.AddressBudget{}, "192.0.2.1"); got != room.DefaultBudgetBurst {
		t.Fatalf("unset budget: got %d joins, want the default burst %d", got, room.DefaultBudgetBurst)
	}
	if got := taken(room.AddressBudget{PerMinute: 60, Burst: 5}, "192.0.2.1"); got != 5 {
		t.Fatalf("changed budget: got %d joins, want 5", got)
	}
}

// TestBudgetBounded: the rooms' tables stay within their cap, and so does
// each room's table of addresses.
func TestBudgetBounded(t *testing.T) {
	b, _, _ := newTestBudgets(t)
	cfg := room.AddressBudget{PerMinute: 1, Burst: 1}
	for i := range budgetRooms + 10 {
		b.take("room"+itoa(i), cfg, "192.0.2.1")
	}
	if len(b.rooms) != budgetRooms {
		t.Fatalf("rooms: got %d, want the cap %d", len(b.rooms), budgetRooms)
	}
	for i := range ratelimit.Addresses + 10 {
		b.take("r1", cfg, "k"+itoa(i))
	}
	if n := b.of("r1", cfg).tokens.Len(); n != ratelimit.Addresses {
		t.Fatalf("addresses: got %d, want the cap %d", n, ratelimit.Addresses)
	}
}

// TestBudgetHarderWork: with proof of work, an address within its budget
// is asked for the room's bits; past it, one bit more, and one more each
// time its debt doubles; the debt drains at the budget's rate; work short
// of what is asked is refused and charges nothing.
func TestBudgetHarderWork(t *testing.T) {
	b, clock, reg := newTestBudgets(t)
	cfg := room.AddressBudget{PerMinute: 60, Burst: 2}
	const key, base = "2001:db8::/64", 15
	var got []int
	for range 12 {
		need, ok := b.chargeWork("r1", cfg, key, base, maxHarderBits)
		if !ok {
			t.Fatalf("work of %d bits refused", maxHarderBits)
		}
		got = append(got, need)
	}
	// Debt in bursts of 2 after each join over budget: 0, ½, 1, 1½, 2, …;
	// extra bits 1 + log2(1 + debt/2).
	want := []int{15, 15, 16, 16, 17, 17, 17, 17, 18, 18, 18, 18}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("bits of join %d: got %v, want %v", i+1, got, want)
		}
	}
	if need, ok := b.chargeWork("r1", cfg, key, base, 17); ok || need != 18 {
		t.Fatalf("17 bits deep in debt: got %d %v, want 18 refused", need, ok)
	}
	clock.Advance(time.Minute) // 60 tokens of refill, more than the debt
	if got := b.bits("r1", cfg, key, base); got != base {
		t.Fatalf("after a calm minute: got %d bits, want %d", got, base)
	}
	if got := refusals(t, reg, "harder"); got != 1 {
		t.Fatalf("harder challenges counted: got %v, want 1", got)
	}
}

// TestBudgetSimultaneousJoins: joins from one address that arrive at once
// with work of the room's bits are decided one after another: the burst
// of them gets in, the others are asked for harder work.
func TestBudgetSimultaneousJoins(t *testing.T) {
	b, _, _ := newTestBudgets(t)
	cfg := room.AddressBudget{PerMinute: 1, Burst: 2}
	const key, base = "192.0.2.7", 8
	var wg sync.WaitGroup
	var in atomic.Int32
	start := make(chan struct{})
	for range 50 {
		wg.Go(func() {
			<-start
			if _, ok := b.chargeWork("r1", cfg, key, base, base); ok {
				in.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := in.Load(); got != 2 {
		t.Fatalf("%d of 50 simultaneous joins paid the room's bits, want the burst of 2", got)
	}
}

func TestHarderBits(t *testing.T) {
	for _, tc := range []struct {
		name              string
		base, burst, bits int
		debt              float64
	}{
		{"just over", 15, 10, 16, 0},
		{"one burst of debt", 15, 10, 17, 10},
		{"three bursts", 15, 10, 18, 30},
		{"capped", 24, 10, 28, 1e9},
		{"never below base", 24, 1, 28, 1e6},
		{"negative debt read as none", 8, 10, 9, -5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := harderBits(tc.base, tc.debt, tc.burst); got != tc.bits {
				t.Fatalf("got %d, want %d", got, tc.bits)
			}
		})
	}
}

// TestSiteOfOlderRoom: a room configured before address budgets and
// pow.auto shows the budget and the factor in force, within the schema's
// ranges, so that writing it back as read is valid.
func TestSiteOfOlderRoom(t *testing.T) {
	v := &room.View{ID: "r1", Config: room.Config{Slug: "old", Name: "Old", RatePerMinute: 60, Pow: room.Pow{Bits: 15}}}
	got := siteOf(v)
	want := room.AddressBudget{PerMinute: room.DefaultBudgetPerMinute, Burst: room.DefaultBudgetBurst}
	if got.AddressBudget != want || got.Pow.AutoFactor != room.DefaultPowAutoFactor {
		t.Fatalf("got budget %+v, factor %v; want %+v, %v", got.AddressBudget, got.Pow.AutoFactor, want, room.DefaultPowAutoFactor)
	}
	cfg := got.Config
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the site as shown does not validate: %v", err)
	}
}
