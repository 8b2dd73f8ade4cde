package room_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// schedule moves g into the phase of its events at now, as the grain's
// tick does, making a due draw first.
func (g *grain) schedule(now int64) {
	g.tb.Helper()
	if _, due := g.st.DrawPending(now); due {
		g.must(g.open(now))
	}
	evs, err := g.st.DecideSchedule(now, testDrawKey)
	if err != nil {
		g.tb.Fatalf("schedule at %v: %v", time.Duration(now-t0), err)
	}
	g.must(evs)
}

// admissions tracks which position admitted which number: a position never
// admits two numbers, and an admitted number stays admitted.
type admissions struct {
	tb    testing.TB
	byPos map[uint64]uint64
	done  map[uint64]bool
}

func newAdmissions(tb testing.TB) *admissions {
	return &admissions{tb: tb, byPos: map[uint64]uint64{}, done: map[uint64]bool{}}
}

func (a *admissions) check(st *room.State, now int64, what string) {
	a.tb.Helper()
	for n := uint64(1); n <= st.Issued; n++ {
		s := st.StatusOf(n, now)
		if !s.Admitted {
			if a.done[n] {
				a.tb.Fatalf("%s: number %d was admitted and is no longer", what, n)
			}
			continue
		}
		if o, ok := a.byPos[s.Position]; ok && o != n {
			a.tb.Fatalf("%s: numbers %d and %d were admitted at position %d", what, o, n, s.Position)
		}
		a.byPos[s.Position], a.done[n] = n, true
	}
}

// TestSaleDay runs the on-sale day of one room configured ahead: the
// pre-sale at its rate, the pre-queue and draw of the main sale, the main
// sale at its rate, sold out at the end; serving continuous at every
// boundary, a crash in the middle, and no number admitted twice.
func TestSaleDay(t *testing.T) {
	g := newRoom(t, saleDay(), at(-hour), 64)
	adm := newAdmissions(t)
	for range 20 {
		g.mustJoin(at(-30 * minute))
	}
	step := func(d int64, want room.Phase, rate float64) {
		t.Helper()
		before := min(g.st.ServingAt(at(d)), float64(g.st.Issued))
		g.schedule(at(d))
		if g.st.Phase != want || g.st.Line.Rate != rate {
			t.Fatalf("at %v: got phase %+v rate %v, want %+v at %v", time.Duration(d), g.st.Phase, g.st.Line.Rate, want, rate)
		}
		// Capacity above the issued numbers is nobody's: a pre-queue drops it.
		if after := min(g.st.ServingAt(at(d)), float64(g.st.Issued)); after != before {
			t.Fatalf("at %v: admitted positions moved from %v to %v", time.Duration(d), before, after)
		}
		adm.check(g.st, at(d), time.Duration(d).String())
	}
	step(-minute, room.Phase{}, 100)
	step(0, room.Phase{Event: 1, Stage: room.StageLive}, 300)
	for range 300 {
		g.mustJoin(at(minute))
	}
	step(10*minute, room.Phase{Event: 1, Stage: room.StageLive}, 300)
	g = g.crash(at(20 * minute))
	step(30*minute, room.Phase{Event: 2, Stage: room.StagePrequeue}, 0)
	if g.st.Armed == nil {
		t.Fatal("no draw armed at the pre-queue")
	}
	pre := g.st.Issued
	for range 200 {
		n := g.mustJoin(at(40 * minute))
		if s := g.st.StatusOf(n, at(40*minute)); !s.PreQueue || s.Admitted || s.OpensAt == nil || !s.OpensAt.Equal(clock(hour)) {
			t.Fatalf("pre-queue number %d: %+v", n, s)
		}
	}
	step(50*minute, room.Phase{Event: 2, Stage: room.StagePrequeue}, 0)
	step(hour, room.Phase{Event: 2, Stage: room.StageLive}, 2000)
	if len(g.st.Draws) != 1 || g.st.Draws[0].From != pre || g.st.Draws[0].To != pre+200 {
		t.Fatalf("draw: got %+v, want over %d–%d", g.st.Draws, pre+1, pre+200)
	}
	if on, bits := g.st.PowInForce(); !on || bits != 12 {
		t.Fatalf("proof of work in the main sale: got %v %d, want 12 bits", on, bits)
	}
	for range 500 {
		g.mustJoin(at(2 * hour))
	}
	step(3*hour, room.Phase{Event: 2, Stage: room.StageLive}, 2000)
	step(9*hour, room.Phase{Event: 2, Stage: room.StageAfter}, 0)
	if _, err := g.join(at(9*hour + second)); err != room.ErrSoldOut {
		t.Fatalf("join after the sale: got %v, want sold out", err)
	}
	if got := g.st.Settings(); got.RatePerMinute != 100 || got.Mode != room.ModeQueue || len(got.Events) != 2 {
		t.Fatalf("the operator's settings after the day: got rate %v mode %s, want them unchanged", got.RatePerMinute, got.Mode)
	}
	var steps int
	for _, a := range g.st.Audit {
		if a.Actor == room.ActorSchedule && a.Action == "schedule" {
			steps++
		}
	}
	if steps != 4 {
		t.Fatalf("schedule changes in the audit trail: got %d, want 4", steps)
	}
}

// TestEventSimulation drives rooms through random days of up to five
// events (pre-queues, rates, modes, end modes) with random arrivals,
// ticks that may skip whole phases, crashes and operator edits, and checks
// at every step that no position admits two numbers, that an admitted
// number stays admitted and that the admitted positions never go back.
func TestEventSimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261203, 23))
	modes := []string{"", "", room.ModePassthrough, room.ModeQueueAll, room.ModeSoldOut}
	ends := []string{"", "", room.ModeSoldOut, room.ModeMaintenance, room.ModeQueue}
	var draws, steps, numbers int
	for run := range 40 {
		cfg := baseConfig()
		cfg.RatePerMinute = 60
		var cursor int64
		for range 1 + rng.IntN(room.MaxEvents) {
			p := room.Period{}
			from := cursor + rng.Int64N(30*minute)
			if rng.IntN(2) == 0 {
				t := clock(from)
				p.PrequeueFrom = &t
				from += minute + rng.Int64N(20*minute)
			}
			p.StartsAt = clock(from)
			cursor = from + minute + rng.Int64N(40*minute)
			p.EndsAt = clock(cursor)
			if rng.IntN(2) == 0 {
				p.RatePerMinute = float64(10 + rng.IntN(300))
			}
			p.Mode, p.EndMode = modes[rng.IntN(len(modes))], ends[rng.IntN(len(ends))]
			cfg.Events = append(cfg.Events, p)
		}
		g := newRoom(t, cfg, at(-minute), uint64(1+rng.IntN(64)))
		adm := newAdmissions(t)
		now, prev := at(-minute), 0.0
		for now < at(cursor+hour) {
			switch r := rng.Float64(); {
			case r < 0.01:
				g = g.crash(now)
			case r < 0.02:
				g.configure(g.st.Settings(), now) // the operator saves the form as it is
			case r < 0.5:
				g.schedule(now)
			default:
				for range rng.IntN(20) {
					if _, err := g.join(now); err != nil && err != room.ErrSoldOut && err != room.ErrMaintenance {
						t.Fatalf("run %d: join: %v", run, err)
					}
				}
			}
			if s := min(g.st.ServingAt(now), float64(g.st.Issued)); s < prev {
				t.Fatalf("run %d at %v: admitted positions went back from %v to %v", run, time.Duration(now-t0), prev, s)
			} else {
				prev = s
			}
			adm.check(g.st, now, "run")
			now += rng.Int64N(3 * minute)
		}
		g.schedule(now)
		draws, numbers = draws+len(g.st.Draws), numbers+int(g.st.Issued)
		for _, a := range g.st.Audit {
			if a.Action == "schedule" {
				steps++
			}
		}
		if want := room.PhaseAt(&cfg, time.Unix(0, now)); g.st.Phase != want {
			t.Fatalf("run %d: phase at the end: got %+v, want %+v", run, g.st.Phase, want)
		}
	}
	t.Logf("40 days: %d schedule changes, %d draws, %d numbers", steps, draws, numbers)
	if draws == 0 || steps == 0 {
		t.Fatal("the simulation made no draw or no schedule change")
	}
}

// TestRateAdjustedDuringEvent: a rate the controller sets outside events is
// the room's own rate (the site shows it); during an event that sets the
// rate it is the event's only, and the room's own rate is back at the end.
func TestRateAdjustedDuringEvent(t *testing.T) {
	g := newRoom(t, saleDay(), at(-hour), 64)
	adjust := func(d int64, to float64) {
		t.Helper()
		e := room.Event{Type: room.TypeRateAdjusted, Epoch: g.st.Epoch, At: at(d), Actor: room.ActorAutoRate,
			RateAdjusted: &room.RateChange{From: g.st.Config.RatePerMinute, To: to}}
		g.must([]room.Event{e})
	}
	adjust(-30*minute, 120)
	if g.st.Config.RatePerMinute != 120 || g.st.Settings().RatePerMinute != 120 {
		t.Fatalf("outside events: in force %v, own %v, want 120 both", g.st.Config.RatePerMinute, g.st.Settings().RatePerMinute)
	}
	g.schedule(at(0))
	adjust(minute, 250)
	if g.st.Config.RatePerMinute != 250 || g.st.Settings().RatePerMinute != 120 {
		t.Fatalf("in the pre-sale: in force %v, own %v, want 250 and 120", g.st.Config.RatePerMinute, g.st.Settings().RatePerMinute)
	}
	g = g.crash(at(2 * minute))
	if g.st.Config.RatePerMinute != 250 || g.st.Settings().RatePerMinute != 120 {
		t.Fatalf("after a recovery: in force %v, own %v", g.st.Config.RatePerMinute, g.st.Settings().RatePerMinute)
	}
	g.schedule(at(30 * minute))
	g.schedule(at(9 * hour))
	if g.st.Config.RatePerMinute != 120 || g.st.Line.Rate != 0 || g.st.Config.Mode != room.ModeSoldOut {
		t.Fatalf("after the day: rate %v line %v mode %s, want the own 120, frozen, sold out", g.st.Config.RatePerMinute, g.st.Line.Rate, g.st.Config.Mode)
	}
}

// TestScheduleWaitsForTheDraw: an event whose pre-queue's draw is not yet
// made when it ends (the draw waits for its beacon round) keeps its
// pre-queue: the end waits for the draw.
func TestScheduleWaitsForTheDraw(t *testing.T) {
	cfg := baseConfig()
	pre := *timeAt(0)
	cfg.Events = []room.Period{{StartsAt: clock(10 * minute), EndsAt: clock(10*minute + 20*second), PrequeueFrom: &pre, EndMode: room.ModeSoldOut}}
	g := newRoom(t, cfg, at(-minute), 64)
	evs, _ := g.st.DecideSchedule(at(0), testDrawKey)
	g.must(evs)
	for range 30 {
		g.mustJoin(at(minute))
	}
	evs, _ = g.st.DecideSchedule(at(11*minute), testDrawKey)
	if len(evs) != 0 || g.st.Armed == nil {
		t.Fatalf("the end before the draw: got %d events, armed %v; want none, still armed", len(evs), g.st.Armed != nil)
	}
	g.must(g.open(at(11 * minute)))
	g.schedule(at(11 * minute))
	if len(g.st.Draws) != 1 || g.st.Draws[0].To != 30 || g.st.Config.Mode != room.ModeSoldOut {
		t.Fatalf("after the draw: draws %+v mode %s, want the 30 drawn and sold out", g.st.Draws, g.st.Config.Mode)
	}
}
