package room_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// shop scripts one health answer.
type shop struct {
	ms     float64
	status int
	cpu    float64
	err    string
	noCPU  bool
}

func (s shop) observe() room.Observation {
	if s.err != "" {
		return room.Observation{Err: s.err}
	}
	m := map[string]float64{"metrics.cpuLoad": s.cpu}
	if s.noCPU {
		m = map[string]float64{}
	}
	st := s.status
	if st == 0 {
		st = 200
	}
	return room.Observation{Status: st, ResponseMs: s.ms, Metrics: m}
}

var (
	healthy = shop{ms: 120, cpu: 0.3}
	slow    = shop{ms: 900, cpu: 0.3}
	busy    = shop{ms: 100, cpu: 0.95}
	erring  = shop{ms: 30, status: 503, cpu: 0.3}
	down    = shop{err: "connection refused"}
	partial = shop{ms: 80, noCPU: true}
)

func regulatorConfig() room.AutoRate {
	a := room.AutoRate{Enabled: true, HealthURL: "https://shop.example/health", MinRate: 60, MaxRate: 600,
		IntervalSeconds: 10, Rules: []room.Rule{{Metric: "responseMs", Op: "<", Value: 500}, {Metric: "metrics.cpuLoad", Op: "<", Value: 0.8}}}
	c := room.Config{AutoRate: a}
	c.Normalize()
	return c.AutoRate
}

// step is one check of a scripted history and what must follow.
type step struct {
	shop     shop
	rate     float64 // want
	failures int     // want
	rule     string  // want, by prefix
}

// run plays a history with a fake clock, one check per interval, and
// checks every step, the bounds and the asymmetry on the way.
func run(t *testing.T, cfg room.AutoRate, start float64, steps []step) {
	t.Helper()
	clock := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	cur := room.AutoState{Rate: start}
	for i, s := range steps {
		next, ch := room.Regulate(cfg, cur, s.shop.observe(), clock)
		if math.Abs(next.Rate-s.rate) > 1e-9 || next.Failures != s.failures {
			t.Fatalf("step %d (%+v): got rate %v failures %d, want %v and %d (%s: %s)", i, s.shop, next.Rate, next.Failures, s.rate, s.failures, ch.Rule, ch.Reason)
		}
		if s.rule != "" && !strings.HasPrefix(ch.Rule, s.rule) {
			t.Fatalf("step %d: got rule %q, want %q", i, ch.Rule, s.rule)
		}
		if ch.From != cur.Rate || ch.To != next.Rate || !ch.At.Equal(clock) || ch.Reason == "" || ch.Failures != next.Failures {
			t.Fatalf("step %d: change %+v does not describe %v → %v at %v", i, ch, cur, next, clock)
		}
		lo, hi := cfg.Bounds()
		if next.Rate < lo || next.Rate > hi {
			t.Fatalf("step %d: rate %v outside %v–%v", i, next.Rate, lo, hi)
		}
		cur = next
		clock = clock.Add(time.Duration(cfg.IntervalSeconds) * time.Second)
	}
}

func TestRegulateRisesSlowlyToTheMaximum(t *testing.T) {
	cfg := regulatorConfig()
	// 5 % a check, rounded to 1/100; a long healthy spell ends at maxRate.
	steps := []step{{healthy, 105, 0, "responseMs < 500 and metrics.cpuLoad < 0.8"}, {healthy, 110.25, 0, ""}, {healthy, 115.76, 0, ""}}
	rate := 115.76
	for range 40 {
		rate = math.Min(600, math.Round(rate*1.05*100)/100)
		steps = append(steps, step{healthy, rate, 0, ""})
	}
	if rate != 600 {
		t.Fatalf("script: got %v, want the maximum reached", rate)
	}
	steps = append(steps, step{healthy, 600, 0, ""}, step{healthy, 600, 0, ""})
	run(t, cfg, 100, steps)
}

func TestRegulateRaisesAtLeastOneAMinute(t *testing.T) {
	cfg := regulatorConfig()
	cfg.MinRate, cfg.MaxRate = 1, 10
	run(t, cfg, 2, []step{{healthy, 3, 0, ""}, {healthy, 4, 0, ""}, {healthy, 5, 0, ""}})
}

func TestRegulateCutsAtOnceAndNotBelowTheMinimum(t *testing.T) {
	cfg := regulatorConfig()
	run(t, cfg, 400, []step{
		{slow, 300, 0, "responseMs < 500"},
		{busy, 225, 0, "metrics.cpuLoad < 0.8"},
		{shop{ms: 800, cpu: 0.9}, 168.75, 0, "responseMs < 500 and metrics.cpuLoad < 0.8"},
		{slow, 126.56, 0, ""},
		{slow, 94.92, 0, ""},
		{slow, 71.19, 0, ""},
		{slow, 60, 0, ""}, // 53.39 kept at the minimum
		{slow, 60, 0, ""},
		{healthy, 63, 0, ""}, // recovery starts from the minimum, slowly
	})
}

func TestRegulateFreezesThenFallsToTheMinimum(t *testing.T) {
	cfg := regulatorConfig()
	run(t, cfg, 400, []step{
		{down, 400, 1, room.RuleFailure},
		{erring, 400, 2, room.RuleFailure},
		{healthy, 420, 0, "responseMs"}, // a good check ends the spell
		{partial, 420, 1, room.RuleFailure},
		{down, 420, 2, room.RuleFailure},
		{down, 60, 3, room.RuleFailure}, // the third in a row: the minimum
		{down, 60, 4, room.RuleFailure},
		{healthy, 63, 0, ""},
		{healthy, 66.15, 0, ""},
	})
}

// The scripted on-sale: healthy, slow, failing, down, back. The rate never
// rises on a bad check and never falls on a good one.
func TestRegulateLongHistory(t *testing.T) {
	cfg := regulatorConfig()
	cfg.MaxFailures = 2
	var history []shop
	for range 40 {
		history = append(history, healthy)
	}
	for range 10 {
		history = append(history, slow)
	}
	for range 3 {
		history = append(history, erring)
	}
	for range 5 {
		history = append(history, down)
	}
	for range 60 {
		history = append(history, healthy)
	}
	cur := room.AutoState{Rate: 100}
	now := time.Unix(1_800_000_000, 0)
	for i, s := range history {
		next, _ := room.Regulate(cfg, cur, s.observe(), now)
		switch s {
		case healthy:
			if next.Rate < cur.Rate || (next.Rate == cur.Rate && cur.Rate != 600) {
				t.Fatalf("check %d healthy: %v → %v", i, cur.Rate, next.Rate)
			}
		case slow:
			if next.Rate > cur.Rate || (next.Rate == cur.Rate && cur.Rate != 60) {
				t.Fatalf("check %d slow: %v → %v", i, cur.Rate, next.Rate)
			}
		default:
			if next.Rate > cur.Rate {
				t.Fatalf("check %d failing: %v → %v", i, cur.Rate, next.Rate)
			}
		}
		cur = next
		now = now.Add(10 * time.Second)
		switch i {
		case 39:
			if cur.Rate != 600 {
				t.Fatalf("after the healthy spell: got %v, want 600", cur.Rate)
			}
		case 57:
			if cur.Rate != 60 || cur.Failures != 8 {
				t.Fatalf("after the outage: got %+v, want the minimum after 8 failures", cur)
			}
		}
	}
	if cur.Rate != 600 || cur.Failures != 0 {
		t.Fatalf("after recovery: got %+v, want back at 600", cur)
	}
}

func TestRegulateAcceptsTheOlderMetricName(t *testing.T) {
	cfg := regulatorConfig()
	cfg.Rules = []room.Rule{{Metric: "responseTimeMs", Op: "<", Value: 500}}
	run(t, cfg, 200, []step{{slow, 150, 0, "responseTimeMs < 500"}, {healthy, 157.5, 0, "responseTimeMs < 500"}})
}

func TestRegulateWithoutRulesFollowsTheStatus(t *testing.T) {
	cfg := regulatorConfig()
	cfg.Rules = nil
	run(t, cfg, 200, []step{{slow, 210, 0, room.RuleHealthy}, {erring, 210, 1, room.RuleFailure}})
}

// A rate outside the bounds (the bounds were just narrowed) comes back
// inside on the next check, whatever it says.
func TestRegulateClampsAnOutsideRate(t *testing.T) {
	cfg := regulatorConfig()
	run(t, cfg, 1000, []step{{healthy, 600, 0, ""}})
	run(t, cfg, 10, []step{{down, 60, 1, room.RuleFailure}})
}

func TestEvaluateRules(t *testing.T) {
	cfg := regulatorConfig()
	cfg.Rules = append(cfg.Rules, room.Rule{Metric: "db.conns", Op: ">", Value: 2})
	got := cfg.Evaluate(room.Observation{Status: 200, ResponseMs: 100, Metrics: map[string]float64{"metrics.cpuLoad": 0.9}})
	if len(got) != 3 || !got[0].Passed || got[1].Passed || *got[1].Observed != 0.9 || got[2].Observed != nil || got[2].Passed {
		t.Fatalf("got %+v", got)
	}
	if ok, why := cfg.Usable(room.Observation{Status: 200, Metrics: map[string]float64{"metrics.cpuLoad": 0.1}}); ok || !strings.Contains(why, "db.conns") {
		t.Fatalf("got %v %q, want the missing metric named", ok, why)
	}
}

// The state machine: adjustments are events that move the line without a
// jump, replay to the same state, and show in the rate log and the audit.
func TestDecideRegulateKeepsServingContinuous(t *testing.T) {
	s := room.New("r1")
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC).UnixNano()
	var log []room.Event
	apply := func(evs []room.Event) {
		for _, e := range evs {
			s.Apply(0, e)
			log = append(log, e)
		}
	}
	cfg := room.Config{Slug: "auto", Name: "Auto", RatePerMinute: 120, Active: true, AutoRate: regulatorConfig()}
	if _, err := s.DecideCreate(cfg, nil, nil, now, "admin", room.DrawKey{}); err == nil || !strings.Contains(err.Error(), "autoRate.enabled") {
		t.Fatalf("create enabled without a test: got %v, want autoRate.enabled refused", err)
	}
	cfg.AutoRate.Enabled = false
	evs, err := s.DecideCreate(cfg, nil, nil, now, "admin", room.DrawKey{})
	if err != nil {
		t.Fatal(err)
	}
	apply(evs)
	s.Reserved, s.Issued = 100000, 100000 // a crowd waits
	cfg.AutoRate.Enabled = true
	if _, err := s.DecideConfigure(cfg, now, "admin", testDrawKey); err == nil || !strings.Contains(err.Error(), "autoRate.enabled") {
		t.Fatalf("enable without a test: got %v, want refused", err)
	}
	evs, _ = s.DecideHealthTested("https://other.example/health", now, "admin")
	apply(evs)
	if _, err := s.DecideConfigure(cfg, now, "admin", testDrawKey); err == nil {
		t.Fatal("enable after a test of another URL: got nil, want refused")
	}
	evs, _ = s.DecideHealthTested(cfg.AutoRate.HealthURL, now, "admin")
	apply(evs)
	evs, err = s.DecideConfigure(cfg, now, "admin", testDrawKey)
	if err != nil {
		t.Fatal(err)
	}
	apply(evs)
	history := []shop{healthy, healthy, slow, down, down, down, healthy, busy, healthy}
	for _, h := range history {
		now += int64(10 * time.Second)
		before := s.ServingAt(now)
		evs := s.DecideRegulate(h.observe(), now)
		apply(evs)
		if after := s.ServingAt(now); math.Abs(after-before) > 1e-6 {
			t.Fatalf("%+v: serving jumped from %v to %v", h, before, after)
		}
		if s.Line.Rate != s.Config.RatePerMinute {
			t.Fatalf("line rate %v, config rate %v", s.Line.Rate, s.Config.RatePerMinute)
		}
	}
	want := []float64{126, 132.3, 99.23, 99.23, 99.23, 60, 63, 60, 63}
	rl := s.RateLog(100)
	if len(rl) != len(want) {
		t.Fatalf("got %d adjustments, want %d: %+v", len(rl), len(want), rl)
	}
	for i, ch := range rl {
		if ch.To != want[i] {
			t.Fatalf("adjustment %d: got %v, want %v", i, ch.To, want[i])
		}
	}
	if got := s.RateLog(2); len(got) != 2 || got[1].To != 63 {
		t.Fatalf("RateLog(2): got %+v", got)
	}
	audits := 0
	for _, a := range s.Audit {
		if a.Action == "rate-adjust" && a.Actor == room.ActorAutoRate {
			audits++
		}
	}
	if audits != len(want) {
		t.Fatalf("got %d rate-adjust audit entries, want %d", audits, len(want))
	}
	// Replay gives the same rate, failures and log.
	r := room.New("r1")
	for _, e := range log {
		r.Apply(0, e)
	}
	if r.Config.RatePerMinute != s.Config.RatePerMinute || r.AutoFailures != s.AutoFailures || len(r.RateChanges) != len(rl) || r.Line != s.Line {
		t.Fatalf("replay: got rate %v failures %d, want %v %d", r.Config.RatePerMinute, r.AutoFailures, s.Config.RatePerMinute, s.AutoFailures)
	}
	// The operator sets the rate by hand: clamped, logged as manual, and
	// the controller goes on from there.
	cfg.RatePerMinute = 5000
	evs, err = s.DecideConfigure(cfg, now, "admin", testDrawKey)
	if err != nil {
		t.Fatal(err)
	}
	apply(evs)
	last := s.RateLog(1)[0]
	if s.Config.RatePerMinute != 600 || last.Rule != room.RuleManual || last.From != 63 || last.To != 600 {
		t.Fatalf("manual: got rate %v and %+v", s.Config.RatePerMinute, last)
	}
	now += int64(10 * time.Second)
	apply(s.DecideRegulate(slow.observe(), now))
	if s.Config.RatePerMinute != 450 {
		t.Fatalf("after manual and a slow check: got %v, want 450", s.Config.RatePerMinute)
	}
	// A steady check at the maximum writes nothing.
	cfg.RatePerMinute = 600
	evs, _ = s.DecideConfigure(cfg, now, "admin", testDrawKey)
	apply(evs)
	if evs := s.DecideRegulate(healthy.observe(), now); len(evs) != 0 {
		t.Fatalf("healthy at the maximum: got %d events, want none", len(evs))
	}
}

func BenchmarkRegulate(b *testing.B) {
	cfg := regulatorConfig()
	obs := healthy.observe()
	now := time.Unix(1_800_000_000, 0)
	cur := room.AutoState{Rate: 100}
	b.ReportAllocs()
	for b.Loop() {
		cur, _ = room.Regulate(cfg, room.AutoState{Rate: 100}, obs, now)
	}
	_ = cur
}
