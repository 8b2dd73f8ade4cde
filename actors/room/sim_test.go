package room_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// TestSimulation drives a room through a million random operations: joins
// arriving below, at and far above the rate, quiet hours, pauses, rate and
// burst changes, changes of mode, scheduled events that change the rate and
// the mode as time passes, block reservations, checkpoints, snapshots, crashes with a
// superseded activation writing on, and graceful stops. It checks on every
// step that numbers are unique and consecutive (but for the numbers a crash
// leaves reserved and unused), that serving never decreases and is
// unchanged by every write but a recovery, and at the end that admissions
// in every window of 1 s, 10 s and 60 s stay within the rate plus the
// burst.
func TestSimulation(t *testing.T) {
	const ops = 1_000_000
	s := newSim(t, rand.New(rand.NewPCG(20261201, 9)))
	start := time.Now()
	s.run(ops)
	s.checkWindows()
	t.Logf("%d operations, %d joins, %d numbers, %d admitted, %d rate changes, %d pauses, %d mode changes, %d events scheduled, %d schedule changes, %d checkpoints, %d crashes, %d graceful stops, %v of fake time, in %v",
		ops, s.joins, s.last, s.admitted, s.rateChanges, s.pauses, s.modeChanges, s.events, s.scheduled, s.checkpoints, s.crashes, s.stops,
		time.Duration(s.now-t0).Round(time.Second), time.Since(start).Round(time.Millisecond))
	t.Logf("largest capacity returned by a crash: %.1f positions (%.2f s of rate); largest real jump %d",
		s.maxBank, s.maxBankSeconds, s.maxJump)
}

// simMaxBlock bounds the blocks the simulated grain reserves.
const simMaxBlock = 300

var (
	simRates  = []float64{30, 120, 600, 3000, 20000}
	simBursts = []float64{1, 5, 5, 15, 60}
	simLoads  = []float64{0.05, 0.3, 0.9, 1.0, 1.5, 5, 50}
	// simModes weighs the modes: queue most of the time.
	simModes = []string{room.ModeQueue, room.ModeQueue, room.ModeQueue, room.ModePassthrough,
		room.ModeSoldOut, room.ModeMaintenance, room.ModeQueueAll}
)

// change is a configuration in force from t on; level is serving at t.
type change struct {
	t            int64
	rate, burst  float64
	level        float64
	active       bool
	burstSeconds float64
	passthrough  bool
}

// jump is a recovery at t that admitted n waiting numbers at once, and
// left at most burst positions free above the issued count.
type jump struct {
	t     int64
	n     int
	burst float64
}

type sim struct {
	t   *testing.T
	rng *rand.Rand
	g   *grain
	cfg room.Config
	now int64

	// issueT[n] is when number n was handed out, or, for a number a crash
	// left unused, when the recovery skipped it; held[n] tells them apart.
	issueT []int64
	held   []bool
	// adm[n] is when held number n was admitted (-1: not yet): the later of
	// its issue and of serving reaching it.
	adm   []int64
	last  uint64  // highest number handed out or skipped
	front uint64  // highest position serving has reached
	prevT int64   // time of the last step
	prevS float64 // serving at prevT
	next  uint64  // the number the next join must get, 0 if not known

	changes []change
	jumps   []jump
	load    float64
	phase   int

	joins, admitted, rateChanges, pauses, modeChanges, checkpoints, crashes, stops int
	events, scheduled                                                              int
	maxBank, maxBankSeconds                                                        float64
	maxJump                                                                        int
}

func newSim(t *testing.T, rng *rand.Rand) *sim {
	s := &sim{t: t, rng: rng, now: t0, load: 1, issueT: []int64{0}, held: []bool{false}, adm: []int64{-1}}
	s.cfg = baseConfig()
	s.g = newRoom(t, s.cfg, s.now, 64)
	s.cfg = s.g.st.Settings()
	s.prevT, s.prevS = s.now, s.g.st.ServingAt(s.now)
	s.front = s.g.st.Serving(s.now)
	s.record()
	return s
}

func (s *sim) record() {
	c := s.g.st.Config
	s.changes = append(s.changes, change{t: s.now, rate: c.RatePerMinute, burst: c.Burst(), level: s.g.st.ServingAt(s.now),
		active: c.Active, burstSeconds: c.BurstSeconds, passthrough: c.Mode == room.ModePassthrough})
}

func (s *sim) run(ops int) {
	for i := range ops {
		s.tick(i)
		before := s.g.st.ServingAt(s.now)
		switch r := s.rng.Float64(); {
		case r < 0.0003:
			s.crash(false)
			continue
		case r < 0.0004:
			s.crash(true)
			continue
		case r < 0.0024:
			s.checkpoints++
			s.g.must(s.g.st.DecideCheckpoint(s.now, false))
			if s.rng.IntN(2) == 0 {
				s.g.snapshot()
			}
		case r < 0.0044:
			s.rateChanges++
			s.cfg.RatePerMinute = simRates[s.rng.IntN(len(simRates))]
			s.cfg.BurstSeconds = simBursts[s.rng.IntN(len(simBursts))]
			s.configure()
		case r < 0.0052:
			s.setMode(simModes[s.rng.IntN(len(simModes))])
			continue
		case r < 0.0055:
			s.scheduleEvent()
			continue
		case s.cfg.Active && r < 0.0057, !s.cfg.Active && r < 0.0152:
			s.pauses++
			s.cfg.Active = !s.cfg.Active
			s.configure()
		case r < 0.02:
			s.status()
		default:
			s.join()
		}
		if got := s.g.st.ServingAt(s.now); got != before && !(s.eff().Mode == room.ModePassthrough && got > before) {
			s.t.Fatalf("op %d at %v: serving moved from %v to %v by a write", i, s.now-t0, before, got)
		}
	}
	s.step(s.now)
}

// tick advances the fake clock: exponential gaps around the phase's load,
// simultaneous arrivals, and now and then a quiet hour.
func (s *sim) tick(i int) {
	if i >= s.phase {
		s.load = simLoads[s.rng.IntN(len(simLoads))]
		s.phase = i + 2000 + s.rng.IntN(20000)
	}
	if s.rng.IntN(100) == 0 {
		s.g.block = uint64(1 + s.rng.IntN(simMaxBlock))
	}
	var gap int64
	switch r := s.rng.Float64(); {
	case r < 0.0001:
		gap = s.rng.Int64N(hour)
	case r < 0.05:
		gap = 0
	default:
		mean := 60e9 / (s.eff().RatePerMinute * s.load)
		gap = int64(s.rng.ExpFloat64() * mean)
	}
	// The grain ticks often: a change of the scheduled settings is
	// applied at its instant, before time moves on past it.
	if next, ok := s.g.st.NextScheduled(s.now); ok && next.UnixNano() <= s.now+gap {
		s.step(next.UnixNano())
		s.settle(func() {
			s.scheduled++
			s.g.must(mustEvents(s.t)(s.g.st.DecideSchedule(s.now, testDrawKey)))
			s.record()
		})
		gap = max(0, gap-(next.UnixNano()-s.now))
	}
	s.step(s.now + gap)
}

// eff is the configuration in force: the operator's, with the overrides
// of the scheduled event in force.
func (s *sim) eff() *room.Config { return &s.g.st.Config }

func mustEvents(t *testing.T) func([]room.Event, error) []room.Event {
	return func(evs []room.Event, err error) []room.Event {
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
}

// scheduleEvent replaces the room's events with one that starts soon (or
// at once) and lasts a while, overriding the rate, the mode or both, and
// perhaps naming a mode for its end.
func (s *sim) scheduleEvent() {
	s.events++
	start := s.now + s.rng.Int64N(10*minute)
	e := room.Period{StartsAt: time.Unix(0, start), EndsAt: time.Unix(0, start+minute+s.rng.Int64N(20*minute))}
	if s.rng.IntN(3) > 0 {
		e.RatePerMinute = simRates[s.rng.IntN(len(simRates))]
	}
	if s.rng.IntN(3) == 0 {
		e.Mode = simModes[s.rng.IntN(len(simModes))]
	}
	if s.rng.IntN(3) == 0 {
		e.EndMode = simModes[s.rng.IntN(len(simModes))]
	}
	s.cfg.Events = []room.Period{e}
	s.settle(s.configure)
}

// step moves the clock to t with the state unchanged: serving must not
// decrease, and every held number serving reaches on the way is admitted
// when the line reaches it (or when it was issued, if later).
func (s *sim) step(t int64) {
	st := s.g.st
	sv := st.ServingAt(t)
	if sv < s.prevS {
		s.t.Fatalf("serving decreased from %v at %v to %v at %v", s.prevS, s.prevT-t0, sv, t-t0)
	}
	top := st.Serving(t)
	for n := s.front + 1; n <= top && n <= s.last; n++ {
		if s.held[n] {
			s.admit(n, max(s.issueT[n], reach(st.Line, n, s.prevT, t)))
		}
	}
	s.front = max(s.front, top)
	s.now, s.prevT, s.prevS = t, t, sv
}

// reach is when line l reaches position n, within (lo, hi].
func reach(l room.Line, n uint64, lo, hi int64) int64 {
	if l.Rate <= 0 {
		return hi
	}
	r := l.T0 + int64(math.Ceil((float64(n)-1e-9-l.Base)/l.Rate*60e9))
	return min(max(r, lo), hi)
}

func (s *sim) admit(n uint64, when int64) {
	if s.adm[n] >= 0 {
		s.t.Fatalf("number %d admitted twice", n)
	}
	s.adm[n] = when
	s.admitted++
}

func (s *sim) grow(n uint64, when int64, held bool) {
	for uint64(len(s.issueT)) <= n {
		s.issueT, s.held, s.adm = append(s.issueT, 0), append(s.held, false), append(s.adm, -1)
	}
	s.issueT[n], s.held[n] = when, held
}

func (s *sim) join() {
	n, err := s.g.join(s.now)
	if want := s.refusal(); want != nil {
		if !errors.Is(err, want) {
			s.t.Fatalf("join in %s (active %v): got %d %v, want %v", s.eff().Mode, s.eff().Active, n, err, want)
		}
		return
	}
	if err != nil {
		s.t.Fatalf("join at %v: %v", s.now-t0, err)
	}
	s.joins++
	if n != s.last+1 || (s.next != 0 && n != s.next) {
		s.t.Fatalf("join at %v: got number %d after %d (want %d)", s.now-t0, n, s.last, s.next)
	}
	s.next = 0
	s.last = n
	s.grow(n, s.now, true)
	st := s.g.st.StatusOf(n, s.now)
	if s.eff().Mode == room.ModePassthrough {
		if !st.Admitted {
			s.t.Fatalf("number %d at %v in passthrough: not admitted", n, s.now-t0)
		}
		s.admit(n, s.now)
		s.front = max(s.front, n)
		s.prevS = s.g.st.ServingAt(s.now)
		return
	}
	if st.Admitted != (n <= s.front) {
		s.t.Fatalf("number %d at %v: admitted %v with serving at %d", n, s.now-t0, st.Admitted, s.front)
	}
	if st.Admitted {
		s.admit(n, s.now)
	}
}

// status checks a random held number against the bookkeeping.
func (s *sim) status() {
	if s.last == 0 {
		return
	}
	n := 1 + s.rng.Uint64N(s.last)
	if !s.held[n] {
		return
	}
	st := s.g.st.StatusOf(n, s.now)
	if st.Admitted != (s.adm[n] >= 0) || (st.Admitted && s.adm[n] > s.now) {
		s.t.Fatalf("status of %d at %v: admitted %v, bookkeeping says %v", n, s.now-t0, st.Admitted, s.adm[n])
	}
	_, err := s.g.st.Admit(n, s.now)
	c := s.eff()
	closed := c.Mode == room.ModeSoldOut || c.Mode == room.ModeMaintenance
	switch want := s.refusal(); {
	case closed || !c.Active:
		if !errors.Is(err, want) {
			s.t.Fatalf("admit %d in %s (active %v): got %v, want %v", n, c.Mode, c.Active, err, want)
		}
	case st.Admitted && err != nil:
		s.t.Fatalf("admit admitted %d: %v", n, err)
	case !st.Admitted && !errors.Is(err, room.ErrTooEarly):
		s.t.Fatalf("admit waiting %d: got %v, want ErrTooEarly", n, err)
	}
}

// refusal is the error a join must get in the current mode, or nil.
func (s *sim) refusal() error {
	switch c := s.eff(); {
	case c.Mode == room.ModeSoldOut:
		return room.ErrSoldOut
	case c.Mode == room.ModeMaintenance:
		return room.ErrMaintenance
	case !c.Active:
		return room.ErrPaused
	}
	return nil
}

// setMode changes the mode. Serving never goes back over an issued number;
// it goes up only on entering passthrough, which admits everyone waiting
// at once; the emergency stop drops the unused burst above the issued
// count, so nobody who joins during it is admitted.
func (s *sim) setMode(mode string) {
	s.modeChanges++
	s.cfg.Mode = mode
	s.settle(s.configure)
}

// settle makes write, which may change the mode in force, and checks the
// line against it (setMode).
func (s *sim) settle(write func()) {
	before := s.g.st.ServingAt(s.now)
	write()
	mode := s.eff().Mode
	after, issued := s.g.st.ServingAt(s.now), float64(s.g.st.Issued)
	switch {
	case after > before && mode != room.ModePassthrough:
		s.t.Fatalf("mode %s at %v: serving rose from %v to %v", mode, s.now-t0, before, after)
	case after < before && after < issued:
		s.t.Fatalf("mode %s at %v: serving went back from %v to %v, below the %v issued", mode, s.now-t0, before, after, issued)
	case mode == room.ModeQueueAll && after > issued:
		s.t.Fatalf("queueAll at %v: serving %v above the %v issued", s.now-t0, after, issued)
	}
	top := s.g.st.Serving(s.now)
	for n := s.front + 1; n <= top && n <= s.last; n++ {
		if s.held[n] {
			s.admit(n, s.now)
		}
	}
	if after < before {
		s.front = top // the positions dropped above the issued count held nobody
	} else {
		s.front = max(s.front, top)
	}
	s.prevS = after
}

func (s *sim) configure() {
	s.g.configure(s.cfg, s.now)
	s.cfg = s.g.st.Settings()
	s.record()
}

// crash recovers the room in a new activation at now; graceful writes a
// final checkpoint first. After a crash the superseded activation writes
// on for a moment; what it writes after the new marker counts for nothing.
func (s *sim) crash(graceful bool) {
	old := s.g
	before := old.st.ServingAt(s.now)
	bank := old.log.durable.At(s.now) - old.st.Line.At(s.now)
	want := old.st.Reserved
	if graceful {
		s.stops++
		old.must(old.st.DecideCheckpoint(s.now, true))
		want = old.st.Issued
	} else {
		s.crashes++
	}
	s.g = old.crash(s.now)
	st := s.g.st
	if st.Issued != want || st.Issued < s.last {
		s.t.Fatalf("recovery at %v: issued %d, want %d (last handed out %d)", s.now-t0, st.Issued, want, s.last)
	}
	if st.Line != old.log.durable {
		s.t.Fatalf("recovery at %v: line %+v, want the last written %+v", s.now-t0, st.Line, old.log.durable)
	}
	if !graceful && s.rng.IntN(2) == 0 {
		reserved, line := st.Reserved, st.Line
		if err := old.reserve(s.now); err != errSuperseded {
			s.t.Fatalf("superseded activation's reservation: got %v, want errSuperseded", err)
		}
		stale := old.st.Settings()
		stale.RatePerMinute = 1
		evs, err := old.st.DecideConfigure(stale, s.now, "admin", testDrawKey)
		if err != nil {
			s.t.Fatal(err)
		}
		if err := old.commit(evs); err != errSuperseded {
			s.t.Fatalf("superseded activation's configuration: got %v, want errSuperseded", err)
		}
		s.g.must(nil) // read them back
		if st.Reserved != reserved || st.Line != line || st.Settings().RatePerMinute != s.cfg.RatePerMinute {
			s.t.Fatalf("superseded activation's writes applied: reserved %d line %+v rate %v", st.Reserved, st.Line, st.Config.RatePerMinute)
		}
	}
	after := st.ServingAt(s.now)
	if after < before {
		s.t.Fatalf("recovery at %v: serving %v below %v before", s.now-t0, after, before)
	}
	for n := s.last + 1; n <= st.Issued; n++ {
		s.grow(n, s.now, false)
	}
	s.last = st.Issued
	s.next = st.Issued + 1
	// What the recovery admits at once is at most the capacity joins had
	// re-based in memory since the last written line.
	top, real := st.Serving(s.now), 0
	for n := s.front + 1; n <= top && n <= s.last; n++ {
		if s.held[n] {
			s.admit(n, s.now)
			real++
		}
	}
	s.front = max(s.front, top)
	s.prevS = after
	if float64(real) > math.Max(bank, 0)+1 {
		s.t.Fatalf("recovery at %v admitted %d at once, but only %v was re-based since the last write", s.now-t0, real, bank)
	}
	// Who waits at a crash joined after the line was last re-based, and
	// every block writes the line: at most a block is admitted early.
	if real > simMaxBlock {
		s.t.Fatalf("recovery at %v admitted %d at once, more than a block of %d", s.now-t0, real, simMaxBlock)
	}
	// A recovery cannot know how far the quiet room had regained its burst
	// (joins write nothing), so it starts with the burst whole: at most one
	// burst more than without the crash.
	free := after - float64(st.Issued)
	if limit := math.Max(st.Config.Burst(), s.changes[len(s.changes)-1].level-float64(st.Issued)); free > limit+1e-9 {
		s.t.Fatalf("recovery at %v: %v positions free above the issued count, more than %v", s.now-t0, free, limit)
	}
	s.jumps = append(s.jumps, jump{t: s.now, n: real, burst: st.Config.Burst()})
	if bank > s.maxBank {
		s.maxBank, s.maxBankSeconds = bank, bank/(st.Config.RatePerMinute/60)
	}
	s.maxJump = max(s.maxJump, real)
}

// checkWindows counts admissions in sliding windows against the rate plus
// the burst in force. Two allowances, both bounded by the checks above:
// capacity serving had already reached when a cut of the rate or burst
// shrank the burst (serving never goes back), and, for a window holding a
// recovery, what the recovery admitted at once plus one burst.
func (s *sim) checkWindows() {
	var times []int64
	for n := uint64(1); n <= s.last; n++ {
		if s.held[n] && s.adm[n] >= 0 {
			times = append(times, s.adm[n])
		}
	}
	if !slices.IsSorted(times) {
		s.t.Fatalf("admission order differs from number order")
	}
	issued := s.issueT[1 : s.last+1]
	issuedBefore := func(a int64) float64 {
		return float64(sort.Search(len(issued), func(i int) bool { return issued[i] >= a }))
	}
	for _, w := range []int64{second, 10 * second, minute} {
		worst, worstAt, worstCount, worstBound := 0.0, int64(0), 0, 0.0
		j, c, k := 0, 0, 0
		for i, a := range times {
			for j < len(times) && times[j] < a+w {
				j++
			}
			for c+1 < len(s.changes) && s.changes[c+1].t <= a {
				c++
			}
			rate, burst := s.changes[c].rate, s.changes[c].burst
			pass := s.changes[c].passthrough
			for d := c + 1; d < len(s.changes) && s.changes[d].t < a+w; d++ {
				rate, burst = max(rate, s.changes[d].rate), max(burst, s.changes[d].burst)
				pass = pass || s.changes[d].passthrough
			}
			carried := s.changes[c].level - issuedBefore(a)
			for k < len(s.jumps) && s.jumps[k].t < a {
				k++
			}
			jumped := 0.0
			for m := k; m < len(s.jumps) && s.jumps[m].t < a+w; m++ {
				jumped += float64(s.jumps[m].n) + s.jumps[m].burst + 1
			}
			bound := rate*float64(w)/60e9 + math.Max(burst, carried) + jumped + 1
			count := j - i
			if pass {
				continue // passthrough admits every arrival: no rate to hold
			}
			if float64(count) > bound {
				s.t.Fatalf("window %v from %v: %d admissions, bound %v (rate %v, burst %v, carried %v, recoveries %v)",
					time.Duration(w), time.Duration(a-t0), count, bound, rate, burst, carried, jumped)
			}
			if r := float64(count) / bound; r > worst {
				worst, worstAt, worstCount, worstBound = r, a, count, bound
			}
		}
		s.t.Logf("window %v: fullest at %v, %d admissions of %.1f allowed", time.Duration(w), time.Duration(worstAt-t0), worstCount, worstBound)
	}
}
