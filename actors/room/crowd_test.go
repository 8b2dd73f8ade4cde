package room_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// TestCrowdSimulation runs a room through an on-sale with a million
// visitors, second by second: a pre-queue and its draw at the opening,
// arrivals from a trickle to a rush, pauses, rate changes, two crashes, a
// third of the visitors walking away (some of them coming back) while the
// rest send a heartbeat a minute, and VIP codes redeemed now and then. It
// checks that present visitors admitted in every window of 1, 10 and 60 s
// stay within the rate × window plus the burst, that admission follows
// arrival order or the drawn permutation, that nobody is admitted twice,
// before the opening or while paused, that a returning visitor is never
// turned away, and that redemptions move neither serving nor the numbers.
func TestCrowdSimulation(t *testing.T) {
	visitors := 1_000_000
	if testing.Short() {
		visitors = 100_000
	}
	start := time.Now()
	c := newCrowd(t, rand.New(rand.NewPCG(2026, 12)), visitors)
	c.run()
	c.check()
	t.Logf("%d visitors joined (%d refused while paused), %d numbers with ghosts, %d drawn at the opening, %d pauses, %d rate changes, 2 crashes, %v of room time in %v",
		c.joins, c.refused, c.g.st.Issued, c.drawn, c.pauses, c.rateChanges, time.Duration(c.now-t0).Round(time.Second), time.Since(start).Round(time.Millisecond))
	t.Logf("%d admitted while present, %d positions passed while their visitor was away (%d counted abandoned, of %d positions examined), %d came back after their turn; %d bypass redemptions, %d refused",
		c.admitted, c.wasted, c.g.st.Abandoned, c.examined, c.lateReturns, c.redeemed, c.redeemRefused)
	t.Logf("present visitors admitted at %.1f%% of the capacity offered while numbers waited; presence memory at most %d numbers (%d waiting then)",
		100*c.efficiency(), c.maxTracked, c.waitingAtMaxTracked)
}

const (
	crowdOpen      = 600 // the scheduled opening, in seconds from t0
	crowdHeartbeat = 60  // seconds between heartbeats of a waiting page
	crowdGrace     = 180
	never          = math.MaxInt32
)

var (
	crowdRates = []float64{3000, 6000, 12000}
	crowdLoads = []float64{10, 60, 120, 200, 450}
)

type crowd struct {
	t       *testing.T
	rng     *rand.Rand
	g       *grain
	d       *detector
	target  int
	now     int64
	sec     int32 // the current second
	rate    float64
	paused  bool
	opened  bool
	load    float64
	codes   []string
	crashAt []int32

	// Per number, indexed by number: when its visitor walks away and comes
	// back (never: it does not), and when the line passed its position (-1:
	// not yet). Ghosts a crash left are away from the start.
	leave, back, passed []int32
	// seen is the last second each number was reported present, and floor
	// the last recovery: the test's own account of the presence memory.
	seen    []int32
	floor   int32
	beats   [crowdHeartbeat][]uint64
	returns map[int32][]uint64
	front   uint64 // highest position the line has passed

	// Per second: present visitors admitted, positions passed, the capacity
	// the configuration gave, the burst in force, and how far serving stood
	// ahead of the last number at its start (capacity banked while nobody
	// waited, never more than a burst).
	real, all      []int32
	capacity, brst []float64
	bank           []float64
	queued         []bool

	joins, refused, admitted, wasted, lateReturns, redeemed, redeemRefused int
	pauses, rateChanges, examined                                          int
	drawn                                                                  uint64
	maxTracked                                                             int
	waitingAtMaxTracked                                                    uint64
	maxBurst                                                               float64
}

func newCrowd(t *testing.T, rng *rand.Rand, visitors int) *crowd {
	cfg := baseConfig()
	cfg.RatePerMinute = 6000
	cfg.OpensAt = timeAt(crowdOpen * second)
	cfg.Abandon = room.Abandon{Enabled: true, GraceSeconds: crowdGrace}
	c := &crowd{t: t, rng: rng, target: visitors, now: at(0), rate: cfg.RatePerMinute, load: 150,
		leave: []int32{0}, back: []int32{never}, passed: []int32{0}, seen: []int32{0},
		returns: map[int32][]uint64{}, maxBurst: cfg.Burst()}
	c.g = newRoom(t, cfg, c.now, 1000)
	c.d = newDetector(c.g, c.now)
	limit := 200
	for i, code := range []string{"press", "partners", "fan-club", "artist", "sponsor"} {
		add := room.CodeAdded{ID: code, Label: code, Hash: hash(code)}
		if i == 2 {
			add.UsageLimit = &limit
		}
		evs, err := c.g.st.DecideAddCode(add, c.now, "admin")
		if err != nil {
			t.Fatal(err)
		}
		c.g.must(evs)
		c.codes = append(c.codes, code)
	}
	c.crashAt = []int32{int32(crowdOpen + 1800 + rng.IntN(1800)), int32(crowdOpen + 5400 + rng.IntN(1800))}
	return c
}

func (c *crowd) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("at %d s: "+format, append([]any{c.sec}, args...)...)
}

func (c *crowd) run() {
	var pauseUntil int32 = -1
	nextPause, nextRate, nextLoad := int32(crowdOpen+600+c.rng.IntN(1200)), int32(crowdOpen+300), int32(crowdOpen)
	for c.sec = 0; ; c.sec++ {
		c.now = at(int64(c.sec) * second)
		c.pass()
		issued := c.g.st.Issued
		waiting := issued - min(issued, c.g.st.Serving(c.now))
		if c.joins >= c.target && (waiting == 0 || c.sec > 30_000) {
			break
		}
		if c.sec == crowdOpen {
			c.open()
		}
		if c.sec == pauseUntil {
			c.configure(func(cfg *room.Config) { cfg.Active = true })
			c.paused = false
		}
		if c.sec == nextPause {
			c.configure(func(cfg *room.Config) { cfg.Active = false })
			c.paused, pauseUntil = true, c.sec+int32(60+c.rng.IntN(240))
			nextPause = c.sec + int32(1800+c.rng.IntN(1800))
			c.pauses++
		}
		if c.sec == nextRate {
			c.rate = crowdRates[c.rng.IntN(len(crowdRates))]
			c.configure(func(cfg *room.Config) { cfg.RatePerMinute = c.rate })
			c.maxBurst = max(c.maxBurst, c.g.st.Config.Burst())
			nextRate = c.sec + int32(600+c.rng.IntN(600))
			c.rateChanges++
		}
		if slices.Contains(c.crashAt, c.sec) {
			c.crash()
		}
		if c.sec == nextLoad {
			c.load = crowdLoads[c.rng.IntN(len(crowdLoads))]
			nextLoad = c.sec + int32(120+c.rng.IntN(480))
		}
		c.record()
		c.heartbeats()
		c.comeBack()
		if c.sec%2 == 0 {
			c.scan()
			if n := c.d.p.Tracked(); n > c.maxTracked {
				c.maxTracked, c.waitingAtMaxTracked = n, waiting
			}
		}
		if c.joins < c.target {
			c.arrive()
		}
		if c.rng.IntN(20) == 0 {
			c.redeem()
		}
	}
}

// record notes what the configuration offers in the coming second.
func (c *crowd) record() {
	cfg := &c.g.st.Config
	capacity := 0.0
	if cfg.Active && !c.g.st.PreQueue() {
		capacity = cfg.RatePerMinute / 60
	}
	c.capacity = append(c.capacity, capacity)
	c.brst = append(c.brst, cfg.Burst())
	c.bank = append(c.bank, max(0, c.g.st.ServingAt(c.now)-float64(c.g.st.Issued)))
	c.real = append(c.real, 0)
	c.all = append(c.all, 0)
	c.queued = append(c.queued, false)
}

func (c *crowd) configure(edit func(cfg *room.Config)) {
	cfg := c.g.st.Config
	edit(&cfg)
	evs, err := c.g.st.DecideConfigure(cfg, c.now, "admin", testDrawKey)
	if err != nil {
		c.fatalf("configure: %v", err)
	}
	c.g.must(evs)
}

func (c *crowd) open() {
	evs := c.g.open(c.now)
	if len(evs) != 1 {
		c.fatalf("the opening made %d events", len(evs))
	}
	c.g.must(evs)
	c.opened = true
	c.drawn = c.g.st.Draws[0].To - c.g.st.Draws[0].From
}

func (c *crowd) crash() {
	before := c.g.st.ServingAt(c.now)
	c.g = c.g.crash(c.now)
	c.d = newDetector(c.g, c.now)
	c.floor = c.sec
	if after := c.g.st.ServingAt(c.now); after < before {
		c.fatalf("serving went back from %v to %v in a crash", before, after)
	}
	// The numbers the crash left reserved and unused hold nobody.
	for uint64(len(c.leave)) <= c.g.st.Issued {
		c.leave, c.back = append(c.leave, 0), append(c.back, never)
		c.passed, c.seen = append(c.passed, -1), append(c.seen, 0)
	}
}

// away reports whether number n's visitor is gone at second s.
func (c *crowd) away(n uint64, s int32) bool { return s >= c.leave[n] && s < c.back[n] }

// pass admits the positions the line passed in the second that just ended.
func (c *crowd) pass() {
	st := c.g.st
	serving := st.Serving(c.now)
	if serving < c.front {
		c.fatalf("serving went back from %d to %d", c.front, serving)
	}
	last := c.sec - 1
	for c.front < serving && c.front < st.Issued && last >= 0 {
		c.front++
		n := st.NumberAt(c.front)
		if c.passed[n] >= 0 {
			c.fatalf("number %d admitted twice (at %d s and now)", n, c.passed[n])
		}
		if !c.opened {
			c.fatalf("number %d admitted before the opening", n)
		}
		if ss := st.StatusOf(n, c.now); !ss.Admitted || ss.Position != c.front {
			c.fatalf("number %d passed at position %d: status %+v", n, c.front, ss)
		}
		c.passed[n] = last
		c.all[last]++
		if c.away(n, c.sec) {
			c.wasted++
			continue
		}
		c.real[last]++
		c.admitted++
	}
	if c.front < st.Issued {
		if n := st.NumberAt(c.front + 1); st.StatusOf(n, c.now).Admitted {
			c.fatalf("number %d at position %d admitted ahead of the line at %d", n, c.front+1, serving)
		}
		if last >= 0 {
			c.queued[last] = true
		}
	}
}

func (c *crowd) seenAt(n uint64, now int64) {
	c.d.p.Seen(n, now)
	c.seen[n] = int32((now - t0) / second)
}

// scan looks for abandoned numbers as the grain does, and checks the count
// against the test's own account: exactly the examined positions whose
// number has been silent for longer than the grace period.
func (c *crowd) scan() {
	from := max(c.g.st.AbandonScan, c.d.p.Cursor(), c.g.st.Serving(c.now))
	got := c.d.scan(c.now)
	to := min(max(c.g.st.AbandonScan, c.d.p.Cursor()), c.g.st.Issued)
	var want uint64
	for p := from + 1; p <= to; p++ {
		if max(c.seen[c.g.st.NumberAt(p)], c.floor) < c.sec-crowdGrace {
			want++
		}
	}
	if got != want {
		c.fatalf("counted %d abandoned among positions %d–%d, want %d", got, from+1, to, want)
	}
	c.examined += int(to - min(to, from))
}

// heartbeats: every waiting page that is open reports once a minute.
func (c *crowd) heartbeats() {
	b := c.beats[c.sec%crowdHeartbeat]
	kept := b[:0]
	for _, n := range b {
		if c.passed[n] >= 0 || (c.away(n, c.sec) && c.back[n] == never) {
			continue // admitted, or gone for good
		}
		kept = append(kept, n)
		if !c.away(n, c.sec) {
			c.seenAt(n, c.now)
		}
	}
	c.beats[c.sec%crowdHeartbeat] = kept
}

// comeBack: a visitor who walked away opens the page again. If its turn
// came meanwhile, it is admitted: the heartbeat never revokes.
func (c *crowd) comeBack() {
	for _, n := range c.returns[c.sec] {
		c.seenAt(n, c.now)
		if c.passed[n] < 0 {
			continue
		}
		if _, err := c.g.st.Admit(n, c.now); err != nil && !errors.Is(err, room.ErrPaused) {
			c.fatalf("number %d back after its turn: %v", n, err)
		}
		c.lateReturns++
	}
	delete(c.returns, c.sec)
}

// arrive lets the second's visitors join, spread over the second.
func (c *crowd) arrive() {
	k := int(c.load * (0.5 + c.rng.Float64()))
	if !c.opened {
		k = int(150 * (0.5 + c.rng.Float64()))
	}
	for i := range k {
		if c.joins >= c.target {
			return
		}
		now := c.now + int64(i)*second/int64(k)
		n, err := c.g.join(now)
		if errors.Is(err, room.ErrPaused) {
			c.refused++
			continue
		}
		if err != nil {
			c.fatalf("join: %v", err)
		}
		c.joins++
		for uint64(len(c.leave)) <= n {
			// Numbers a crash skipped, then n itself.
			c.leave, c.back = append(c.leave, 0), append(c.back, never)
			c.passed, c.seen = append(c.passed, -1), append(c.seen, 0)
		}
		c.seenAt(n, now) // the join is the first sighting
		c.leave[n], c.back[n] = never, never
		if c.rng.IntN(3) == 0 {
			// A third walk away, after a few seconds to a quarter of an hour;
			// one in ten of them comes back later.
			c.leave[n] = c.sec + int32(c.rng.ExpFloat64()*300)
			if c.rng.IntN(10) == 0 {
				c.back[n] = c.leave[n] + 1 + int32(c.rng.ExpFloat64()*600)
				c.returns[c.back[n]] = append(c.returns[c.back[n]], n)
			}
		}
		phase := (c.sec + 1 + int32(c.rng.IntN(crowdHeartbeat))) % crowdHeartbeat
		c.beats[phase] = append(c.beats[phase], n)
	}
}

// redeem uses a VIP code: it must take no slot and hand out no number.
func (c *crowd) redeem() {
	now := c.now + second/2
	serving, issued := c.g.st.ServingAt(now), c.g.st.Issued
	evs, _, err := c.g.st.DecideRedeem(hash(c.codes[c.rng.IntN(len(c.codes))]), now)
	if err != nil {
		if !errors.Is(err, room.ErrNoCode) {
			c.fatalf("redeem: %v", err)
		}
		c.redeemRefused++
		return
	}
	c.g.must(evs)
	c.redeemed++
	if s := c.g.st.ServingAt(now); s != serving || c.g.st.Issued != issued {
		c.fatalf("a redemption moved serving from %v to %v, issued from %d to %d", serving, s, issued, c.g.st.Issued)
	}
}

func (c *crowd) check() {
	c.checkWindows()
	c.checkOrder()
	if e := c.efficiency(); e < 0.9 {
		c.t.Fatalf("present visitors got %.1f%% of the capacity offered while numbers waited, want at least 90%%", 100*e)
	}
	for s := range c.all {
		if (c.capacity[s] == 0) && c.all[s] > 0 {
			c.t.Fatalf("second %d: %d admitted with the line standing (paused or before the opening)", s, c.all[s])
		}
	}
}

// checkWindows: in every window, present visitors admitted ≤ the rate over
// the window plus the burst (or what was banked at its start, itself never
// more than a burst).
func (c *crowd) checkWindows() {
	n := len(c.real)
	sumReal := make([]float64, n+1)
	sumCap := make([]float64, n+1)
	for s := range n {
		sumReal[s+1] = sumReal[s] + float64(c.real[s])
		sumCap[s+1] = sumCap[s] + c.capacity[s]
		if c.bank[s] > c.maxBurst+1e-6 {
			c.t.Fatalf("second %d: %.1f positions banked, more than the largest burst %.1f", s, c.bank[s], c.maxBurst)
		}
	}
	for _, w := range []int{1, 10, 60} {
		worst := 0.0
		for a := 0; a+w <= n; a++ {
			burst := c.bank[a]
			for s := a; s < a+w; s++ {
				burst = max(burst, c.brst[s])
			}
			got, allowed := sumReal[a+w]-sumReal[a], sumCap[a+w]-sumCap[a]+burst+1
			if got > allowed {
				c.t.Fatalf("%d present visitors admitted in the %d s from %d s, allowed %.1f (rate %.1f/s, burst %.1f)",
					int(got), w, a, allowed, c.capacity[a], burst)
			}
			if allowed > 0 {
				worst = max(worst, got/allowed)
			}
		}
		c.t.Logf("windows of %d s: at most %.0f%% of rate × window + burst", w, 100*worst)
	}
}

// checkOrder: the drawn group in the order of its permutation, then
// everyone else in arrival order; no gaps.
func (c *crowd) checkOrder() {
	d := c.g.st.Draws[0]
	byPos := make([]uint64, d.To-d.From+1)
	for n := d.From + 1; n <= d.To; n++ {
		p := d.Position(n)
		if !d.Contains(p) || byPos[p-d.From] != 0 {
			c.t.Fatalf("the draw gives position %d twice or outside the pre-queue", p)
		}
		byPos[p-d.From] = n
	}
	prev := int32(-1)
	check := func(n uint64) {
		got := c.passed[n]
		if got < 0 {
			prev = never // nobody after it may have been admitted
			return
		}
		if got < prev {
			c.t.Fatalf("number %d admitted at %d s, before one ahead of it (at %d s)", n, got, prev)
		}
		prev = got
	}
	for _, n := range byPos[1:] {
		check(n)
	}
	for n := d.To + 1; n <= c.g.st.Issued; n++ {
		check(n)
	}
}

// efficiency is the share of the capacity offered, while numbers waited
// and after the first grace period, that went to visitors present.
func (c *crowd) efficiency() float64 {
	var got, offered float64
	for s := range c.real {
		if c.queued[s] && s > crowdOpen+crowdGrace {
			got += float64(c.real[s])
			offered += c.capacity[s]
		}
	}
	if offered == 0 {
		return 0
	}
	return got / offered
}
