package room_test

import (
	"errors"
	"math"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The draw's positions are a bijection of the pre-queue onto [From+1, To],
// and Number inverts Position.
func TestDrawIsBijection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to uint64
		key      string
	}{
		{"one", 0, 1, "k"},
		{"two", 0, 2, "k"},
		{"three", 5, 8, "k"},
		{"four", 0, 4, "k"},
		{"seven", 100, 107, "other key"},
		{"power of two", 0, 1024, "k"},
		{"power of two plus one", 3, 3 + 1025, "k"},
		{"odd bits", 0, 1 << 17, "k"},
		{"large odd size", 77, 77 + 65537, ""},
		{"a million", 12345, 12345 + 1_000_000, "opening key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := room.Draw{From: tc.from, To: tc.to, Key: []byte(tc.key)}
			size := tc.to - tc.from
			hit := make([]bool, size)
			for n := tc.from + 1; n <= tc.to; n++ {
				if !d.Contains(n) {
					t.Fatalf("Contains(%d) false", n)
				}
				p := d.Position(n)
				if p <= tc.from || p > tc.to {
					t.Fatalf("Position(%d) = %d outside [%d, %d]", n, p, tc.from+1, tc.to)
				}
				if hit[p-tc.from-1] {
					t.Fatalf("Position(%d) = %d given twice", n, p)
				}
				hit[p-tc.from-1] = true
				if back := d.Number(p); back != n {
					t.Fatalf("Number(Position(%d)) = %d", n, back)
				}
			}
			if d.Contains(tc.from) || d.Contains(tc.to+1) {
				t.Fatalf("Contains outside [%d, %d]", tc.from+1, tc.to)
			}
		})
	}
}

// The draw is fair: a number's place has nothing to do with when it was
// drawn. Pearson's r between number and position over 10^5 numbers is near
// zero (its standard deviation for a random permutation is about 0.003).
func TestDrawUncorrelated(t *testing.T) {
	for _, key := range []string{"k1", "k2", "opening 2026-12-01", "\x00"} {
		d := room.Draw{From: 0, To: 100_000, Key: []byte(key)}
		var sx, sy, sxx, syy, sxy float64
		n := float64(d.To)
		for i := d.From + 1; i <= d.To; i++ {
			x, y := float64(i), float64(d.Position(i))
			sx, sy, sxx, syy, sxy = sx+x, sy+y, sxx+x*x, syy+y*y, sxy+x*y
		}
		r := (n*sxy - sx*sy) / math.Sqrt((n*sxx-sx*sx)*(n*syy-sy*sy))
		if math.Abs(r) >= 0.01 {
			t.Errorf("key %q: Pearson r = %v, want |r| < 0.01", key, r)
		}
		// Neighbours in arrival order land far apart.
		near := 0
		for i := d.From + 1; i < d.To; i++ {
			a, b := d.Position(i), d.Position(i+1)
			if a-b < 100 || b-a < 100 {
				near++
			}
		}
		if near > 1000 { // expected about 200
			t.Errorf("key %q: %d of %v consecutive numbers land within 100 places", key, near, n)
		}
	}
}

// Another key is another order.
func TestDrawDependsOnKey(t *testing.T) {
	a := room.Draw{From: 0, To: 10_000, Key: []byte("a")}
	b := room.Draw{From: 0, To: 10_000, Key: []byte("b")}
	same := 0
	for n := uint64(1); n <= 10_000; n++ {
		if a.Position(n) == b.Position(n) {
			same++
		}
	}
	if same > 10 { // expected about 1
		t.Fatalf("%d of 10000 places agree between two keys", same)
	}
}

// Invariant 6 at the state machine: numbers drawn before the opening form a
// pre-queue whose order is drawn at the opening; later joins follow in
// arrival order behind it.
func TestScheduledOpening(t *testing.T) {
	opening := 2 * hour
	cfg := baseConfig() // 10 a second, burst 50
	cfg.OpensAt = timeAt(opening)
	g := newRoom(t, cfg, at(0), 1000)
	if !g.st.PreQueue() || g.st.Armed == nil || g.st.Armed.From != 0 {
		t.Fatalf("created with a future opening: got armed %+v, want a draw from 0", g.st.Armed)
	}
	if due, ok := g.st.OpeningDue(); !ok || due.UnixNano() != at(opening) {
		t.Fatalf("OpeningDue: got %v %v, want %v", due, ok, cfg.OpensAt)
	}
	const pre = 5000
	for i := range pre {
		now := at(int64(i) * second)
		n := g.mustJoin(now)
		st := g.st.StatusOf(n, now)
		if st.Admitted || !st.PreQueue || st.Ahead != 0 || st.OpensAt == nil || st.Drawn {
			t.Fatalf("pre-queue status of %d: got %+v", n, st)
		}
		if _, err := g.st.Admit(n, now); !errors.Is(err, room.ErrTooEarly) {
			t.Fatalf("admit %d before the opening: got %v, want ErrTooEarly", n, err)
		}
	}
	for _, d := range []int64{0, minute, opening - 1} {
		if s := g.st.ServingAt(at(d)); s != 0 {
			t.Fatalf("serving at %v before the opening: got %v, want 0", d, s)
		}
		if evs := g.open(at(d)); evs != nil {
			t.Fatalf("DecideOpen at %v before the opening: got %d events", d, len(evs))
		}
	}
	if st := g.st.StatusOf(1, at(opening-1)); st.Admitted {
		t.Fatalf("number 1 admitted a nanosecond before the opening")
	}

	// A crash before the opening keeps the pre-queue armed.
	g = g.crash(at(opening - second))
	if !g.st.PreQueue() || g.st.Armed.From != 0 {
		t.Fatalf("after recovery: got armed %+v, want the draw still armed", g.st.Armed)
	}

	evs := g.open(at(opening))
	if len(evs) != 1 || evs[0].Type != room.TypeDrawn {
		t.Fatalf("DecideOpen at the opening: got %+v, want one drawn event", evs)
	}
	g.must(evs)
	issued := g.st.Issued // ghosts of the crash included: they hold nobody
	if g.st.PreQueue() || len(g.st.Draws) != 1 {
		t.Fatalf("after the draw: got armed %+v, %d draws", g.st.Armed, len(g.st.Draws))
	}
	d := g.st.Draws[0]
	if d.From != 0 || d.To != issued {
		t.Fatalf("draw: got [%d, %d], want [1, %d]", d.From+1, d.To, issued)
	}
	if evs := g.open(at(opening + second)); evs != nil {
		t.Fatalf("DecideOpen after the draw: got %d events, want none", len(evs))
	}
	// Later joins follow in arrival order behind the drawn group.
	var later []uint64
	for i := range 100 {
		later = append(later, g.mustJoin(at(opening+int64(i)*ms)))
	}
	for i, n := range later {
		if p := g.st.Position(n); p != n || n != issued+uint64(i)+1 {
			t.Fatalf("later join %d: got number %d position %d, want %d", i, n, p, issued+uint64(i)+1)
		}
	}
	// Admission goes by drawn position, at the rate.
	seen := make([]bool, issued+1)
	for n := uint64(1); n <= issued; n++ {
		p := g.st.Position(n)
		if seen[p] {
			t.Fatalf("position %d twice", p)
		}
		seen[p] = true
		if g.st.NumberAt(p) != n {
			t.Fatalf("NumberAt(Position(%d)) = %d", n, g.st.NumberAt(p))
		}
	}
	for _, e := range []int64{0, second, minute, 5 * minute} {
		now := at(opening + e)
		serving := g.st.Serving(now)
		if want := uint64(float64(e) / float64(second) * 10); serving != want {
			t.Fatalf("serving %v after the opening: got %d, want %d", e, serving, want)
		}
		for _, n := range []uint64{1, 2, 3, issued / 2, issued, later[0], later[99]} {
			st := g.st.StatusOf(n, now)
			if st.Admitted != (st.Position <= serving) || st.Drawn != (n <= issued) || st.PreQueue {
				t.Fatalf("status of %d %v after the opening: got %+v", n, e, st)
			}
		}
		if g.st.StatusOf(later[0], now).Admitted {
			t.Fatalf("later join %d admitted before the drawn group", later[0])
		}
	}
	// The draw survives replay: every node computes the same order.
	r := g.crash(at(opening + minute))
	for n := uint64(1); n <= issued; n += 97 {
		if r.st.Position(n) != g.st.Position(n) {
			t.Fatalf("position of %d after replay: got %d, want %d", n, r.st.Position(n), g.st.Position(n))
		}
	}
}

// Changing the opening through the configuration.
func TestOpeningThroughConfiguration(t *testing.T) {
	t.Run("arm a running room", func(t *testing.T) {
		cfg := baseConfig()
		g := newRoom(t, cfg, at(0), 1000)
		for range 300 {
			g.mustJoin(at(0))
		}
		admitted := g.st.Serving(at(10 * second)) // 150: the burst and 10 s of rate
		cfg.OpensAt = timeAt(hour)
		g.configure(cfg, at(10*second))
		if g.st.Armed == nil || g.st.Armed.From != 300 {
			t.Fatalf("got armed %+v, want a draw from 300", g.st.Armed)
		}
		// Arming revokes no admission; who waited before waits on.
		for _, now := range []int64{at(10 * second), at(hour - 1)} {
			if _, err := g.st.Admit(1, now); err != nil {
				t.Fatalf("admit 1, admitted before the arming: %v", err)
			}
			if st := g.st.StatusOf(admitted, now); !st.Admitted {
				t.Fatalf("number %d admitted before the arming: got %+v", admitted, st)
			}
			if st := g.st.StatusOf(admitted+1, now); st.Admitted {
				t.Fatalf("number %d admitted before the opening: got %+v", admitted+1, st)
			}
		}
		n := g.mustJoin(at(11 * second))
		if st := g.st.StatusOf(n, at(hour-1)); st.Admitted || !st.PreQueue {
			t.Fatalf("pre-queue number %d: got %+v", n, st)
		}
		if s := g.st.ServingAt(at(hour - 1)); s > 300 {
			t.Fatalf("serving before the opening: got %v, want at most 300", s)
		}
		g.must(g.open(at(hour)))
		if d := g.st.Draws[0]; d.From != 300 || d.To != n {
			t.Fatalf("draw: got [%d, %d], want [301, %d]", d.From+1, d.To, n)
		}
		// Those who waited before the arming go first, in arrival order.
		if st := g.st.StatusOf(300, at(hour+15*second)); !st.Admitted || st.Drawn {
			t.Fatalf("number 300, 15 s after the opening: got %+v", st)
		}
		if st := g.st.StatusOf(n, at(hour+15*second)); st.Admitted {
			t.Fatalf("drawn number %d admitted before the earlier queue: got %+v", n, st)
		}
	})
	t.Run("move the opening later keeps it armed", func(t *testing.T) {
		g, cfg := armedRoom(t, hour, 10)
		cfg.OpensAt = timeAt(2 * hour)
		g.configure(cfg, at(30*minute))
		if g.st.Armed == nil || g.st.Armed.From != 0 {
			t.Fatalf("got armed %+v, want still armed from 0", g.st.Armed)
		}
		if evs := g.open(at(hour)); evs != nil {
			t.Fatalf("draw at the old opening: got %d events, want none", len(evs))
		}
		for range 10 {
			g.mustJoin(at(90 * minute))
		}
		g.must(g.open(at(2 * hour)))
		if d := g.st.Draws[0]; d.From != 0 || d.To != 20 {
			t.Fatalf("draw: got [%d, %d], want [1, 20]", d.From+1, d.To)
		}
	})
	t.Run("move the opening earlier keeps it armed", func(t *testing.T) {
		g, cfg := armedRoom(t, 2*hour, 1)
		cfg.OpensAt = timeAt(hour)
		g.configure(cfg, at(30*minute))
		if g.st.Armed == nil {
			t.Fatal("opening moved earlier: disarmed")
		}
		if due, _ := g.st.OpeningDue(); due.UnixNano() != at(hour) {
			t.Fatalf("OpeningDue: got %v, want %v", due, timeAt(hour))
		}
		if g.st.StatusOf(1, at(hour-1)).Admitted {
			t.Fatal("admitted before the opening")
		}
		g.must(g.open(at(hour)))
		if !g.st.StatusOf(1, at(hour+second)).Admitted {
			t.Fatal("number 1 of a pre-queue of one not admitted a second after the opening")
		}
	})
	t.Run("opening moved into the past is due at once", func(t *testing.T) {
		g, cfg := armedRoom(t, hour, 50)
		cfg.OpensAt = timeAt(10 * minute)
		evs, err := g.st.DecideConfigure(cfg, at(20*minute), "admin", testDrawKey)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Type != room.TypeConfigured || evs[0].Configured.Recommit == nil {
			t.Fatalf("got %+v, want one configured event that recommits", evs)
		}
		g.must(evs)
		// The recommitment closes no earlier than its own time.
		if c := g.st.Armed.Commit; c.ClosesAt != at(20*minute)/1e6 {
			t.Fatalf("recommitted closing: got %d, want %d", c.ClosesAt, at(20*minute)/1e6)
		}
		g.must(g.open(at(20 * minute)))
		if g.st.PreQueue() || len(g.st.Draws) != 1 || g.st.Draws[0].To != 50 {
			t.Fatalf("after: got armed %+v, draws %+v", g.st.Armed, g.st.Draws)
		}
		if s := g.st.Serving(at(20*minute + second)); s != 10 {
			t.Fatalf("serving a second after the draw: got %d, want 10", s)
		}
	})
	t.Run("opening removed admits in arrival order", func(t *testing.T) {
		g, cfg := armedRoom(t, hour, 50)
		cfg.OpensAt = nil
		g.configure(cfg, at(20*minute))
		if g.st.PreQueue() || len(g.st.Draws) != 0 {
			t.Fatalf("after removing the opening: got armed %+v, draws %d", g.st.Armed, len(g.st.Draws))
		}
		if st := g.st.StatusOf(10, at(20*minute+second)); !st.Admitted || st.Drawn || st.Position != 10 {
			t.Fatalf("number 10 a second after: got %+v", st)
		}
	})
	t.Run("opening in the past at creation does not arm", func(t *testing.T) {
		cfg := baseConfig()
		cfg.OpensAt = timeAt(-hour)
		g := newRoom(t, cfg, at(0), 1000)
		if g.st.PreQueue() {
			t.Fatal("armed by an opening in the past")
		}
		if n := g.mustJoin(at(0)); !g.st.StatusOf(n, at(0)).Admitted {
			t.Fatal("first visitor of an open room not admitted at once")
		}
	})
}
