package room_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Invariant 2: a rate change keeps serving continuous at the moment of the
// change, and serving never decreases afterwards.
func TestRateChangeKeepsServingContinuous(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to float64
		burst    [2]float64 // BurstSeconds before and after (0: default)
		joins    int        // joins at the start: a queue when above the burst
		after    int64      // time of the change after the joins
	}{
		{"raise with a queue", 600, 6000, [2]float64{}, 5000, 10 * second},
		{"cut with a queue", 6000, 60, [2]float64{}, 5000, 10 * second},
		{"raise while idle", 60, 6000, [2]float64{}, 3, hour},
		{"cut while idle", 6000, 60, [2]float64{}, 3, hour},
		{"cut while idle, nobody ever joined", 6000, 1, [2]float64{}, 0, hour},
		{"cut to the minimum while the burst is in use", 600, 1, [2]float64{}, 20, 2 * second},
		{"shorter burst while idle", 600, 600, [2]float64{60, 1}, 0, hour},
		{"longer burst while idle", 600, 600, [2]float64{1, 60}, 0, hour},
		{"cut and shorter burst with a queue", 6000, 100, [2]float64{30, 1}, 10000, 3 * second},
		{"same rate", 600, 600, [2]float64{}, 100, 7 * second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.RatePerMinute, cfg.BurstSeconds = tc.from, tc.burst[0]
			g := newRoom(t, cfg, at(0), 1000)
			for range tc.joins {
				g.mustJoin(at(0))
			}
			now := at(tc.after)
			justBefore := g.st.ServingAt(now - 1)
			before := g.st.ServingAt(now)
			cfg.RatePerMinute, cfg.BurstSeconds = tc.to, tc.burst[1]
			g.configure(cfg, now)
			after := g.st.ServingAt(now)
			if after != before {
				t.Fatalf("serving at the change: got %v after, want %v as before", after, before)
			}
			if justBefore > after {
				t.Fatalf("serving 1 ns before the change %v is above %v after", justBefore, after)
			}
			prev := after
			for _, d := range []int64{1, ms, second, 10 * second, minute, hour} {
				s := g.st.ServingAt(now + d)
				if s < prev {
					t.Fatalf("serving decreased from %v to %v at +%dns", prev, s, d)
				}
				prev = s
			}
			// The line runs at the new rate from the change on while
			// people wait.
			if tc.joins > 0 && before < float64(g.st.Issued) {
				got := g.st.ServingAt(now+second) - after
				want := math.Min(tc.to/60, float64(g.st.Issued)+g.st.Config.Burst()-after)
				if math.Abs(got-want) > 1e-6 {
					t.Fatalf("advance in the second after the change: got %v, want %v", got, want)
				}
			}
		})
	}
}

// Invariant 2 over joins, pause and resume, rate changes and a recovery:
// serving sampled on a fine fake clock never goes down.
func TestServingNeverDecreases(t *testing.T) {
	cfg := baseConfig()
	g := newRoom(t, cfg, at(0), 64)
	var prev float64
	now := at(0)
	check := func(what string) {
		t.Helper()
		s := g.st.ServingAt(now)
		if s < prev {
			t.Fatalf("%s at %v: serving %v below %v", what, now-t0, s, prev)
		}
		prev = s
	}
	step := func(what string, d int64, f func()) {
		t.Helper()
		for end := now + d; now < end; now += 37 * ms {
			check(what)
			if f != nil {
				f()
				check(what)
			}
		}
	}
	join := func() {
		if _, err := g.join(now); err != nil && !errors.Is(err, room.ErrPaused) {
			t.Fatal(err)
		}
	}
	step("idle", 10*second, nil)
	step("joins", 10*second, func() { join(); join(); join(); join() })
	cfg.Active = false
	g.configure(cfg, now)
	check("pause")
	step("paused", 30*second, join)
	cfg.Active = true
	g.configure(cfg, now)
	check("resume")
	step("joins after resume", 10*second, func() { join(); join() })
	for _, r := range []float64{6000, 1, 60, 600000, 30} {
		cfg.RatePerMinute = r
		g.configure(cfg, now)
		check(fmt.Sprintf("rate %v", r))
		step(fmt.Sprintf("joins at rate %v", r), 2*second, join)
	}
	g.must(g.st.DecideCheckpoint(now, false))
	check("checkpoint")
	step("joins after checkpoint", 5*second, func() { join(); join(); join() })
	g = g.crash(now)
	check("recovery")
	step("joins after recovery", 5*second, func() { join(); join() })
	step("idle after recovery", hour, nil)
}

// Invariant 2 across a crash: the recovered room serves at least what was
// served before it, whatever the in-memory line did since the last write.
func TestServingAfterRecoveryNotBelowBefore(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(g *grain) int64 // returns the crash time
	}{
		{"queue, no checkpoint", func(g *grain) int64 {
			for range 3000 {
				g.mustJoin(at(second))
			}
			return at(20 * second)
		}},
		{"idle hour after joins", func(g *grain) int64 {
			for i := range 100 {
				g.mustJoin(at(int64(i) * second))
			}
			return at(hour)
		}},
		{"spike after an idle hour", func(g *grain) int64 {
			for range 10000 {
				g.mustJoin(at(hour))
			}
			return at(hour + 2*second)
		}},
		{"checkpoint then joins", func(g *grain) int64 {
			for range 500 {
				g.mustJoin(at(second))
			}
			g.must(g.st.DecideCheckpoint(at(5*second), false))
			for range 500 {
				g.mustJoin(at(6 * second))
			}
			return at(7 * second)
		}},
		{"paused", func(g *grain) int64 {
			for range 500 {
				g.mustJoin(at(second))
			}
			cfg := g.st.Config
			cfg.Active = false
			g.configure(cfg, at(10*second))
			return at(minute)
		}},
		{"snapshot then joins", func(g *grain) int64 {
			for range 500 {
				g.mustJoin(at(second))
			}
			g.snapshot()
			for i := range 500 {
				g.mustJoin(at(2*second + int64(i)*10*ms))
			}
			return at(8 * second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRoom(t, baseConfig(), at(0), 256)
			crashAt := tc.run(g)
			before := g.st.ServingAt(crashAt)
			r := g.crash(crashAt)
			after := r.st.ServingAt(crashAt)
			if after < before {
				t.Fatalf("serving after recovery %v below %v before", after, before)
			}
			if r.st.Serving(crashAt+minute) < g.st.Serving(crashAt+minute) {
				t.Fatalf("a minute later: serving %d after recovery below %d", r.st.Serving(crashAt+minute), g.st.Serving(crashAt+minute))
			}
		})
	}
}

// Invariant 3: capacity is not banked while nobody waits. After an idle
// hour a spike is admitted at the rate plus the burst, not all at once.
func TestSpikeAfterIdleHourAdmittedAtRate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rate         float64
		burstSeconds float64
		warmup       int // joins before the idle hour
	}{
		{"default burst", 600, 0, 0},
		{"default burst after earlier visitors", 600, 0, 250},
		{"slow room", 60, 0, 10},
		{"tiny rate, burst of one", 1, 0, 0},
		{"long burst", 6000, 60, 1000},
		{"short burst", 6000, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.RatePerMinute, cfg.BurstSeconds = tc.rate, tc.burstSeconds
			g := newRoom(t, cfg, at(0), 500)
			for i := range tc.warmup {
				g.mustJoin(at(int64(i) * ms))
			}
			burst := math.Floor(g.st.Config.Burst() + 1e-9)
			if tc.burstSeconds == 0 && burst != math.Max(1, math.Floor(tc.rate*room.DefaultBurstSeconds/60)) {
				t.Fatalf("default burst: got %v, want %v seconds of rate", burst, room.DefaultBurstSeconds)
			}
			spike := at(hour)
			var numbers []uint64
			for range 10000 {
				numbers = append(numbers, g.mustJoin(spike))
			}
			admitted := func(now int64) int {
				c := 0
				for _, n := range numbers {
					if g.st.StatusOf(n, now).Admitted {
						c++
					}
				}
				return c
			}
			if got := admitted(spike); float64(got) != burst {
				t.Fatalf("admitted at the spike: got %d, want the burst %v", got, burst)
			}
			for _, d := range []int64{second, 10 * second, minute} {
				got := admitted(spike + d)
				want := math.Min(10000, math.Floor(burst+tc.rate*float64(d)/float64(minute)+1e-9))
				if float64(got) != want {
					t.Fatalf("admitted %v after the spike: got %d, want %v", d, got, want)
				}
			}
		})
	}
}

// Invariant 3 across a crash: a crash during a spike does not hand the
// capacity of the idle hour before it back to the spike.
func TestSpikeThenCrashAdmittedAtRate(t *testing.T) {
	cfg := baseConfig() // 10 a second, burst 50
	g := newRoom(t, cfg, at(0), 100)
	for i := range 20 {
		g.mustJoin(at(int64(i) * second))
	}
	spike := at(hour)
	for range 10000 {
		g.mustJoin(spike)
	}
	crashAt := spike + 2*second
	before := g.st.Serving(crashAt)
	r := g.crash(crashAt)
	after := r.st.Serving(crashAt)
	// At most what was served before, plus the numbers reserved but never
	// handed out (they hold nobody) and rounding.
	ghosts := r.st.Issued - g.st.Issued
	if after > before+ghosts+1 {
		t.Fatalf("serving after recovery: got %d, want at most %d (before %d, ghosts %d)", after, before+ghosts+1, before, ghosts)
	}
}

// Invariant 4: below the rate a join is admitted at once.
func TestJoinBelowRateAdmittedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rate  float64
		gap   int64 // between joins
		first int64 // first join after creation
	}{
		{"first visitor at creation", 600, second, 0},
		{"at exactly the rate", 600, 100 * ms, 0},
		{"half the rate", 60, 2 * second, 0},
		{"slowest rate", 1, minute, 0},
		{"slowest rate, first at creation", 1, 2 * minute, 0},
		{"fast room", 600000, ms / 5, 0},
		{"after an idle hour", 600, 150 * ms, hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.RatePerMinute = tc.rate
			g := newRoom(t, cfg, at(0), 32)
			for i := range 200 {
				now := at(tc.first + int64(i)*tc.gap)
				n := g.mustJoin(now)
				st := g.st.StatusOf(n, now)
				if !st.Admitted {
					t.Fatalf("join %d (number %d) at %v: not admitted (serving %d)", i, n, now-t0, st.Serving)
				}
				if _, err := g.st.Admit(n, now); err != nil {
					t.Fatalf("admit %d: %v", n, err)
				}
			}
		})
	}
	t.Run("above the rate a queue forms", func(t *testing.T) {
		g := newRoom(t, baseConfig(), at(0), 32)
		var last uint64
		for range 200 {
			last = g.mustJoin(at(0))
		}
		if g.st.StatusOf(last, at(0)).Admitted {
			t.Fatalf("number %d of a simultaneous 200 admitted at once", last)
		}
		if _, err := g.st.Admit(last, at(0)); !errors.Is(err, room.ErrTooEarly) {
			t.Fatalf("admit too early: got %v, want ErrTooEarly", err)
		}
	})
}

// Invariant 5: paused, nobody joins and nobody is admitted; the line is
// frozen and resumes where it stood.
func TestPauseFreezesLine(t *testing.T) {
	cfg := baseConfig()
	g := newRoom(t, cfg, at(0), 1000)
	var numbers []uint64
	for range 300 {
		numbers = append(numbers, g.mustJoin(at(0)))
	}
	pauseAt := at(10 * second)
	frozen := g.st.ServingAt(pauseAt)
	cfg.Active = false
	g.configure(cfg, pauseAt)
	for _, d := range []int64{0, ms, second, minute, hour} {
		now := pauseAt + d
		if _, err := g.join(now); !errors.Is(err, room.ErrPaused) {
			t.Fatalf("join while paused: got %v, want ErrPaused", err)
		}
		if s := g.st.ServingAt(now); s != frozen {
			t.Fatalf("serving %v into the pause: got %v, want %v", d, s, frozen)
		}
		for _, n := range []uint64{numbers[0], numbers[150], numbers[299]} {
			if _, err := g.st.Admit(n, now); !errors.Is(err, room.ErrPaused) {
				t.Fatalf("admit %d while paused: got %v, want ErrPaused", n, err)
			}
		}
		if st := g.st.StatusOf(numbers[299], now); st.Active {
			t.Fatalf("status while paused: active")
		}
	}
	// The pause survives recovery.
	g = g.crash(pauseAt + hour)
	if _, err := g.join(pauseAt + hour); !errors.Is(err, room.ErrPaused) {
		t.Fatalf("join while paused after recovery: got %v, want ErrPaused", err)
	}
	if s := g.st.ServingAt(pauseAt + hour); s != frozen {
		t.Fatalf("serving after recovery in the pause: got %v, want %v", s, frozen)
	}
	resumeAt := pauseAt + 2*hour
	cfg.Active = true
	g.configure(cfg, resumeAt)
	if s := g.st.ServingAt(resumeAt); s != frozen {
		t.Fatalf("serving at resume: got %v, want %v", s, frozen)
	}
	if got, want := g.st.ServingAt(resumeAt+second), frozen+10; math.Abs(got-want) > 1e-9 {
		t.Fatalf("serving a second after resume: got %v, want %v", got, want)
	}
	if _, err := g.join(resumeAt); err != nil {
		t.Fatalf("join after resume: %v", err)
	}
}
