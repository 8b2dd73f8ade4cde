package room_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// scanAhead is how far ahead of the window the tests examine, as the grain
// does: a little more than the time between two scans.
const scanAhead = 3 * time.Second

// detector is the grain's abandon detection around the test harness: the
// presence memory and the scan that writes Abandoned events.
type detector struct {
	g *grain
	p *room.Presence
}

func newDetector(g *grain, now int64) *detector {
	return &detector{g: g, p: room.NewPresence(g.st, now)}
}

// join draws a number; the join is its first sighting.
func (d *detector) join(now int64) uint64 {
	d.g.tb.Helper()
	n := d.g.mustJoin(now)
	d.p.Seen(n, now)
	return n
}

// waitsOutGrace scans every 2 s of the 60 s grace period after from
// (seconds), what happened then, and fails when it counts anyone
// abandoned within it or no one just after it.
func (d *detector) waitsOutGrace(from int64, what string) {
	d.g.tb.Helper()
	for s := from + 2; s <= from+60; s += 2 {
		if c := d.scan(at(s * second)); c != 0 {
			d.g.tb.Fatalf("counted %d abandoned %d s after %s, within the grace period", c, s-from, what)
		}
	}
	if c := d.scan(at((from + 62) * second)); c == 0 {
		d.g.tb.Fatalf("nothing counted a grace period after %s", what)
	}
}

// scan examines the positions ahead of the window and commits what it
// finds; it returns how many numbers it counted as abandoned.
func (d *detector) scan(now int64) uint64 {
	d.g.tb.Helper()
	evs, cursor := d.g.st.DecideAbandon(d.p, now, scanAhead)
	if len(evs) == 0 {
		d.p.Examined(&d.g.st.View, cursor)
		return 0
	}
	before := d.g.st.ServingAt(now)
	d.g.must(evs)
	d.p.Examined(&d.g.st.View, d.g.st.AbandonScan)
	c := evs[0].Abandoned.Count
	if after := d.g.st.ServingAt(now); after != before+float64(c) {
		d.g.tb.Fatalf("abandoned %d at %v: serving went from %v to %v, want it moved by the count", c, time.Duration(now-t0), before, after)
	}
	return c
}

func abandonConfig(rate float64, grace int) room.Config {
	cfg := baseConfig()
	cfg.RatePerMinute = rate
	cfg.Abandon = room.Abandon{Enabled: true, GraceSeconds: grace}
	return cfg
}

func TestPresenceMemory(t *testing.T) {
	g := newRoom(t, abandonConfig(60, 60), at(0), 1000)
	p := room.NewPresence(g.st, at(0))
	for range 100 {
		g.mustJoin(at(0))
	}
	// Numbers issued before the presence memory existed count as seen at
	// its creation.
	if got, want := p.LastSeen(50), uint32(at(0)/second); got != want {
		t.Fatalf("LastSeen of an untracked number: got %d, want %d", got, want)
	}
	p.Seen(50, at(90*second))
	p.Seen(50, at(30*second)) // a late report does not go back in time
	if got, want := p.LastSeen(50), uint32(at(90*second)/second); got != want {
		t.Fatalf("LastSeen(50): got %d, want %d", got, want)
	}
	if p.Tracked() > 100 {
		t.Fatalf("tracks %d numbers of 100 issued", p.Tracked())
	}
	// Examined numbers are forgotten.
	p.Examined(&g.st.View, 60)
	if p.Tracked() > 40 {
		t.Fatalf("after examining 60 of 100: tracks %d numbers, want at most 40", p.Tracked())
	}
	p.Seen(10, at(100*second)) // behind the cursor: nobody asks any more
	if got, want := p.LastSeen(10), uint32(at(0)/second); got != want {
		t.Fatalf("LastSeen of an examined number: got %d, want %d", got, want)
	}
	// Forget counts everyone as seen now.
	p.Forget(&g.st.View, at(200*second))
	if got, want := p.LastSeen(99), uint32(at(200*second)/second); got != want {
		t.Fatalf("LastSeen after Forget: got %d, want %d", got, want)
	}
	if p.Tracked() != 0 {
		t.Fatalf("Forget kept %d entries", p.Tracked())
	}
}

// With a third of the queue gone, detection gives the visitors who stay
// the whole configured rate; without it they would get two thirds.
func TestAbandonKeepsThroughputAtRate(t *testing.T) {
	const (
		rate    = 600 // a minute: 10 a second
		grace   = 180
		total   = 20_000
		horizon = 1200 // seconds simulated
	)
	g := newRoom(t, abandonConfig(rate, grace), at(0), 1000)
	d := newDetector(g, at(0))
	rng := rand.New(rand.NewPCG(7, 7))
	gone := make([]bool, total+1)
	phase := make([][]uint64, 60) // heartbeat second of the minute → numbers
	for i := range total {
		now := at(int64(i) * 5 * ms) // everybody within 100 s
		n := d.join(now)
		if rng.IntN(3) == 0 {
			gone[n] = true // closes the tab right after joining
			continue
		}
		s := (int64(i)*5/1000 + 1 + rng.Int64N(59)) % 60
		phase[s] = append(phase[s], n)
	}
	real := make([]int, horizon+1) // present visitors admitted in each second
	var passed uint64
	var abandoned uint64
	for s := int64(0); s <= horizon; s++ {
		now := at(s * second)
		for _, n := range phase[s%60] {
			d.p.Seen(n, now) // heartbeat every 60 s while waiting
		}
		if s%2 == 0 {
			abandoned += d.scan(now)
		}
		serving := g.st.Serving(now)
		for ; passed < serving; passed++ {
			if n := g.st.NumberAt(passed + 1); !gone[n] {
				real[s]++
			}
		}
	}
	sum := func(from, to int) (n int) {
		for s := from; s < to; s++ {
			n += real[s]
		}
		return n
	}
	// Before the grace period nobody is known to be gone.
	if got, want := float64(sum(20, 170))/150, 10.0*2/3; got < want*0.9 || got > want*1.1 {
		t.Errorf("present visitors admitted per second before the grace period: got %.2f, want about %.2f", got, want)
	}
	if got := float64(sum(240, horizon)) / float64(horizon-240); got < 10*0.99 || got > 10*1.01 {
		t.Errorf("present visitors admitted per second with detection: got %.3f, want 10 (the rate) within 1%%", got)
	}
	for s := 240; s+10 <= horizon; s++ {
		if n := sum(s, s+10); n > 10*10+50 {
			t.Fatalf("%d present visitors admitted in the 10 s from %d s, more than rate × 10 s + burst", n, s)
		}
	}
	if abandoned == 0 || abandoned > total/3+total/30 {
		t.Fatalf("counted %d abandoned of %d joins", abandoned, total)
	}
	if g.st.Abandoned != abandoned {
		t.Fatalf("State.Abandoned = %d, want %d", g.st.Abandoned, abandoned)
	}
	// The memory follows the waiting numbers.
	if waiting := g.st.Issued - g.st.Serving(at(horizon*second)); uint64(d.p.Tracked()) > waiting+1000 {
		t.Fatalf("presence tracks %d numbers while %d wait", d.p.Tracked(), waiting)
	}
	t.Logf("%d abandoned counted, %.3f present visitors admitted per second after the grace period",
		abandoned, float64(sum(240, horizon))/(horizon-240))
}

// A visitor whose number was counted as abandoned is not revoked: back
// inside the window, it is admitted like anybody else.
func TestAbandonedVisitorReturnsAdmitted(t *testing.T) {
	g := newRoom(t, abandonConfig(30, 60), at(0), 1000) // one every 2 s, burst 2.5
	d := newDetector(g, at(0))
	for range 200 {
		d.join(at(0))
	}
	const early, late = 20, 50 // both silent from the start
	var counted []uint64
	returned := false
	for s := int64(1); s <= 150; s++ {
		now := at(s * second)
		for n := uint64(1); n <= 200; n++ {
			if n != early && n != late && (int64(n)+s)%30 == 0 {
				d.p.Seen(n, now)
			}
		}
		if s%2 == 0 {
			before := g.st.Abandoned
			if d.scan(now) > 0 {
				counted = append(counted, g.st.Abandoned-before)
			}
		}
		if !returned && g.st.Abandoned > 0 {
			// The visitor comes back: a heartbeat, then its status.
			returned = true
			d.p.Seen(late, now)
		}
		if st := g.st.StatusOf(late, now); returned && st.Position <= st.Serving && !st.Admitted {
			t.Fatalf("returning visitor %d inside the window at %d s not admitted: %+v", late, s, st)
		}
	}
	if g.st.Abandoned != 1 || len(counted) != 1 {
		t.Fatalf("counted %d abandoned (%v), want 1: number %d was silent for less than the grace period when the window neared it",
			g.st.Abandoned, counted, early)
	}
	now := at(150 * second)
	if _, err := g.st.Admit(late, now); err != nil {
		t.Fatalf("token of the returning visitor %d: %v", late, err)
	}
	if _, err := g.st.Admit(early, now); err != nil {
		t.Fatalf("token of number %d: %v", early, err)
	}
	// A crash replays the count and the cursor: nothing is counted twice.
	r := g.crash(now)
	if r.st.Abandoned != 1 || r.st.AbandonScan != g.st.AbandonScan || r.st.Serving(now) != g.st.Serving(now) {
		t.Fatalf("after replay: abandoned %d cursor %d serving %d, want %d %d %d", r.st.Abandoned, r.st.AbandonScan,
			r.st.Serving(now), g.st.Abandoned, g.st.AbandonScan, g.st.Serving(now))
	}
}

// After a restart nobody has been seen by the new activation: every waiting
// number counts as seen at the recovery, so detection waits a grace period.
func TestAbandonAfterRecoveryIsConservative(t *testing.T) {
	g := newRoom(t, abandonConfig(60, 60), at(0), 100)
	d := newDetector(g, at(0))
	for range 1000 {
		d.join(at(0))
	}
	// Nobody reports presence: everyone is silent from t0.
	g = g.crash(at(50 * second))
	d = newDetector(g, at(50*second))
	d.waitsOutGrace(50, "the recovery")
}

func TestAbandonStandsStill(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(cfg *room.Config)
	}{
		{"paused", func(cfg *room.Config) { cfg.Active = false }},
		{"before the opening", func(cfg *room.Config) { cfg.OpensAt = timeAt(hour) }},
		{"detection off", func(cfg *room.Config) { cfg.Abandon.Enabled = false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRoom(t, abandonConfig(60, 60), at(0), 100)
			d := newDetector(g, at(0))
			for range 500 {
				d.join(at(0))
			}
			cfg := g.st.Config
			tc.change(&cfg)
			g.configure(cfg, at(second))
			before := g.st.Serving(at(10 * minute))
			if evs, _ := g.st.DecideAbandon(d.p, at(10*minute), scanAhead); evs != nil {
				t.Fatalf("DecideAbandon: got %+v, want nothing", evs)
			}
			if after := g.st.Serving(at(10 * minute)); after != before {
				t.Fatalf("serving moved from %d to %d", before, after)
			}
		})
	}
}

// Switching detection on mid-sale does not take the whole queue for gone:
// presence was not reported while it was off.
func TestAbandonSwitchedOnMidSale(t *testing.T) {
	cfg := abandonConfig(60, 60)
	cfg.Abandon.Enabled = false
	g := newRoom(t, cfg, at(0), 100)
	d := newDetector(g, at(0))
	for range 1000 {
		d.join(at(0))
	}
	for s := int64(2); s <= 300; s += 2 {
		// The grain forgets presence while detection is off.
		d.p.Forget(&g.st.View, at(s*second))
	}
	cfg.Abandon.Enabled = true
	g.configure(cfg, at(300*second))
	d.waitsOutGrace(300, "switching detection on")
}

// During a draw a position is not its number: the scan asks about the
// number drawn to each position, and the memory of the pre-queue is kept
// until the window has left it.
func TestAbandonFollowsTheDraw(t *testing.T) {
	cfg := abandonConfig(600, 60)
	cfg.OpensAt = timeAt(10 * minute)
	g := newRoom(t, cfg, at(0), 1000)
	d := newDetector(g, at(0))
	const pre = 3000
	for i := range pre {
		d.join(at(int64(i) * 100 * ms))
	}
	silent := func(n uint64) bool { return n%3 == 0 }
	open := 10 * minute
	g.must(g.open(at(open)))
	if len(g.st.Draws) != 1 {
		t.Fatal("no draw")
	}
	first := g.st.Serving(at(open)) // admitted at the opening, never examined
	var counted uint64
	for s := int64(0); s <= 600; s += 2 {
		now := at(open + s*second)
		for n := uint64(1); n <= pre; n++ {
			if !silent(n) {
				d.p.Seen(n, now)
			}
		}
		counted += d.scan(now)
		if s == 100 && d.p.Tracked() < pre/2 {
			t.Fatalf("inside the draw the memory holds %d numbers, want the pre-queue's rest", d.p.Tracked())
		}
	}
	// Every position the scans examined was counted exactly when the number
	// drawn to it is silent.
	// (The cursor may stand beyond the last number: positions the window
	// has passed need no examination, whoever draws them later.)
	var want uint64
	cursor := max(g.st.AbandonScan, d.p.Cursor())
	for p := first + 1; p <= min(cursor, g.st.Issued); p++ {
		if silent(g.st.NumberAt(p)) {
			want++
		}
	}
	if counted != want || counted == 0 {
		t.Fatalf("counted %d abandoned, want %d (the silent numbers at the examined positions %d–%d; draw %+v issued %d)", counted, want, first+1, cursor, g.st.Draws[0].To, g.st.Issued)
	}
	if cursor < pre || d.p.Tracked() != 0 {
		t.Fatalf("after the window left the draw: cursor %d, %d numbers tracked", cursor, d.p.Tracked())
	}
}

func TestAbandonedEventApplies(t *testing.T) {
	g := newRoom(t, abandonConfig(30, 60), at(0), 100)
	for range 100 {
		g.mustJoin(at(0))
	}
	p := room.NewPresence(g.st, at(0))
	evs, _ := g.st.DecideAbandon(p, at(2*minute), scanAhead)
	if len(evs) != 1 || evs[0].Line == nil || evs[0].Abandoned.Count == 0 {
		t.Fatalf("got %+v, want one Abandoned event carrying the line", evs)
	}
	st := room.New("r1")
	b, err := evs[0].Encode()
	if err != nil {
		t.Fatal(err)
	}
	e, err := room.DecodeEvent(b)
	if err != nil || e.Line == nil || *e.Line != *evs[0].Line {
		t.Fatalf("decoded %+v, %v", e, err)
	}
	st.Epoch = evs[0].Epoch
	st.Apply(1, e)
	if st.Line != *evs[0].Line || st.Abandoned != evs[0].Abandoned.Count || st.AbandonScan != evs[0].Abandoned.Cursor {
		t.Fatalf("after Apply: line %+v abandoned %d cursor %d", st.Line, st.Abandoned, st.AbandonScan)
	}
}
