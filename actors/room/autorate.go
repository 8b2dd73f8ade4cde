package room

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The self-regulating rate's controller: pure, no I/O, time passed in. The
// grain fetches the health URL, hands the answer to Regulate through
// DecideRegulate and appends the event it returns; replay applies the same
// events, so a new owner goes on from the logged rate and failure count.

// Metric names the controller always knows.
const (
	// MetricResponseMs is the measured response time in milliseconds.
	MetricResponseMs = "responseMs"
	// metricResponseTimeMs is the older name of responseMs.
	metricResponseTimeMs = "responseTimeMs"
	// MetricStatus is the HTTP status of the health answer.
	MetricStatus = "status"
)

// Rules of a rate change that no configured rule caused.
const (
	RuleFailure = "failure"
	RuleManual  = "manual"
	RuleHealthy = "status 2xx"
)

// ActorAutoRate is the audit actor of the controller's own changes.
const ActorAutoRate = "auto-rate"

// MaxRateLog bounds the adjustments kept in the state (oldest dropped).
const MaxRateLog = 500

// Observation is one health check as the controller sees it.
type Observation struct {
	// Err is set when the check failed before an answer was read (timeout,
	// connection refused, address refused); the other fields are then zero.
	Err string
	// Status is the HTTP status of the answer.
	Status int
	// ResponseMs is the time to the whole answer, in milliseconds.
	ResponseMs float64
	// Metrics are the numeric fields of the JSON answer by dot path.
	Metrics map[string]float64
}

// RateChange is one adjustment of the self-regulating rate, as it stands in
// the room's log and in its rate log.
type RateChange struct {
	At   time.Time `json:"at"`
	From float64   `json:"from"`
	To   float64   `json:"to"`
	// Rule is the rule that caused the change ("responseMs < 500"), the
	// rules that all held, "failure" or "manual".
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// Observed holds responseMs, status and every rule's metric as seen.
	Observed map[string]float64 `json:"observed"`
	// Failures is the count of consecutive failed checks after this one.
	Failures int `json:"failures"`
	// Pow is the automatic proof of work after this change (Bits 0: lifted);
	// nil when the change is of the rate alone.
	Pow *PowLevel `json:"pow,omitempty"`
}

// AutoState is what the controller carries from one check to the next.
type AutoState struct {
	Rate     float64
	Failures int
}

// RuleResult is how one rule evaluates against an observation. Observed is
// nil when the metric is not in the answer.
type RuleResult struct {
	Metric   string   `json:"metric"`
	Op       string   `json:"op"`
	Value    float64  `json:"value"`
	Observed *float64 `json:"observed"`
	Passed   bool     `json:"passed"`
}

// String is the rule as the rate log shows it: "responseMs < 500".
func (r Rule) String() string {
	return r.Metric + " " + r.Op + " " + strconv.FormatFloat(r.Value, 'f', -1, 64)
}

// lookup returns the observed value of metric.
func (o *Observation) lookup(metric string) (float64, bool) {
	switch metric {
	case MetricResponseMs, metricResponseTimeMs:
		return o.ResponseMs, true
	case MetricStatus:
		return float64(o.Status), true
	}
	v, ok := o.Metrics[metric]
	return v, ok
}

// Evaluate evaluates every rule of a against obs, in order.
func (a *AutoRate) Evaluate(obs Observation) []RuleResult {
	out := make([]RuleResult, 0, len(a.Rules))
	for _, r := range a.Rules {
		rr := RuleResult{Metric: r.Metric, Op: r.Op, Value: r.Value}
		if v, ok := obs.lookup(r.Metric); ok && obs.Err == "" {
			v := v
			rr.Observed = &v
			rr.Passed = (r.Op == "<" && v < r.Value) || (r.Op == ">" && v > r.Value)
		}
		out = append(out, rr)
	}
	return out
}

// Usable reports whether obs is a check the controller can act on: no
// transport error, a 2xx status and every rule's metric present. The
// health-check test passes on exactly this.
func (a *AutoRate) Usable(obs Observation) (bool, string) {
	if obs.Err != "" {
		return false, obs.Err
	}
	if obs.Status < 200 || obs.Status > 299 {
		return false, fmt.Sprintf("status %d", obs.Status)
	}
	for _, r := range a.Rules {
		if _, ok := obs.lookup(r.Metric); !ok {
			return false, fmt.Sprintf("metric %s missing from the answer", r.Metric)
		}
	}
	return true, ""
}

// Bounds returns the effective minimum and maximum rate.
func (a *AutoRate) Bounds() (float64, float64) {
	lo, hi := a.MinRate, a.MaxRate
	if lo < 1 {
		lo = 1
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// Clamp returns rate within the bounds.
func (a *AutoRate) Clamp(rate float64) float64 {
	lo, hi := a.Bounds()
	return math.Min(hi, math.Max(lo, rate))
}

// withDefaults fills fields that events written before they existed lack.
func (a AutoRate) withDefaults() AutoRate {
	a.normalize()
	return a
}

// Regulate is the controller: given the configuration, the state after the
// previous check and one observation at now, it returns the next state and
// the change that explains it. Deliberately asymmetric:
//   - every rule holds: the rate rises by RaisePercent (at least 1 a minute);
//   - a rule is violated: the rate is cut by CutPercent at once;
//   - the check failed (no answer, non-2xx, a rule's metric missing): the
//     rate stays as it is, and after MaxFailures consecutive failures it
//     falls to MinRate.
//
// The result is always within MinRate–MaxRate and rounded to 1/100.
func Regulate(cfg AutoRate, cur AutoState, obs Observation, now time.Time) (AutoState, RateChange) {
	cfg = cfg.withDefaults()
	lo, hi := cfg.Bounds()
	ch := RateChange{At: now.UTC(), From: cur.Rate, Observed: observed(&cfg, obs)}
	next := AutoState{Rate: cur.Rate}
	if ok, why := cfg.Usable(obs); !ok {
		next.Failures = cur.Failures + 1
		ch.Rule = RuleFailure
		if next.Failures >= cfg.MaxFailures {
			next.Rate = lo
			ch.Reason = fmt.Sprintf("%s; %d failed checks in a row: minimum rate", why, next.Failures)
		} else {
			next.Rate = math.Min(hi, math.Max(lo, cur.Rate))
			ch.Reason = fmt.Sprintf("%s; rate frozen (%d of %d failed checks)", why, next.Failures, cfg.MaxFailures)
		}
		ch.To, ch.Failures = next.Rate, next.Failures
		return next, ch
	}
	var violated []string
	var held []string
	for i, rr := range cfg.Evaluate(obs) {
		if rr.Passed {
			held = append(held, cfg.Rules[i].String())
			continue
		}
		violated = append(violated, cfg.Rules[i].String())
		if len(violated) == 1 {
			ch.Reason = fmt.Sprintf("%s is %s: cut by %s%%", rr.Metric, formatRate(*rr.Observed), formatRate(cfg.CutPercent))
		}
	}
	if len(violated) > 0 {
		ch.Rule = strings.Join(violated, " and ")
		next.Rate = round2(cur.Rate * (1 - cfg.CutPercent/100))
	} else {
		ch.Rule = RuleHealthy
		if len(held) > 0 {
			ch.Rule = strings.Join(held, " and ")
		}
		ch.Reason = "all rules hold"
		next.Rate = round2(cur.Rate + math.Max(1, cur.Rate*cfg.RaisePercent/100))
	}
	next.Rate = math.Min(hi, math.Max(lo, next.Rate))
	ch.To = next.Rate
	return next, ch
}

// observed is what the rate log keeps of obs: the response time, the status
// and each rule's metric (not the whole answer).
func observed(cfg *AutoRate, obs Observation) map[string]float64 {
	if obs.Err != "" {
		return map[string]float64{}
	}
	out := map[string]float64{MetricResponseMs: round2(obs.ResponseMs), MetricStatus: float64(obs.Status)}
	for _, r := range cfg.Rules {
		if v, ok := obs.lookup(r.Metric); ok {
			out[r.Metric] = v
		}
	}
	return out
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func formatRate(v float64) string { return strconv.FormatFloat(round2(v), 'f', -1, 64) }

// DecideRegulate turns one health check into events: none when the rate and
// the failure count stay as they are. A rate change re-anchors the line at
// now, so serving stays continuous and never goes back.
func (s *State) DecideRegulate(obs Observation, now int64) []Event {
	if !s.Live() || !s.Config.AutoRate.Enabled {
		return nil
	}
	cur := AutoState{Rate: s.Config.RatePerMinute, Failures: s.AutoFailures}
	next, ch := Regulate(s.Config.AutoRate, cur, obs, time.Unix(0, now))
	if next == cur {
		return nil
	}
	return []Event{s.rateEvent(ch, now, ActorAutoRate)}
}

// rateEvent is the event of change ch; a new rate moves the line.
func (s *State) rateEvent(ch RateChange, now int64, actor string) Event {
	e := s.event(TypeRateAdjusted, now, actor)
	e.RateAdjusted = &ch
	if ch.To != s.Config.RatePerMinute {
		cfg := s.Config
		cfg.RatePerMinute = ch.To
		line := s.normalized(now).anchor(now, lineRate(&cfg, s.Armed != nil))
		e.Line = &line
	}
	return e
}

// manualRate handles an operator's rate change while the controller runs:
// the new rate, clamped to MinRate–MaxRate, becomes the controller's
// starting point, and the change is logged with rule "manual".
func (s *State) manualRate(cfg *Config, now int64, actor string) *Event {
	if !cfg.AutoRate.Enabled {
		return nil
	}
	asked := cfg.RatePerMinute
	cfg.RatePerMinute = cfg.AutoRate.Clamp(asked)
	if cfg.RatePerMinute == s.Config.RatePerMinute {
		return nil
	}
	by := "the operator"
	if actor == ActorSchedule {
		by = "a scheduled event"
	}
	reason := "set by " + by
	if asked != cfg.RatePerMinute {
		reason = fmt.Sprintf("set by %s to %s, kept within %s–%s", by, formatRate(asked),
			formatRate(cfg.AutoRate.MinRate), formatRate(cfg.AutoRate.MaxRate))
	}
	e := s.event(TypeRateAdjusted, now, actor)
	e.RateAdjusted = &RateChange{At: time.Unix(0, now).UTC(), From: s.Config.RatePerMinute, To: cfg.RatePerMinute,
		Rule: RuleManual, Reason: reason, Observed: map[string]float64{}}
	return &e
}

// checkEnable refuses to enable the controller (or change its URL while it
// is enabled) unless a health-check test of that URL passed.
func (s *State) checkEnable(cfg *Config) error {
	a := cfg.AutoRate
	if !a.Enabled || (s.Config.AutoRate.Enabled && s.Config.AutoRate.HealthURL == a.HealthURL) {
		return nil
	}
	if s.HealthPassed != a.HealthURL {
		return invalid("autoRate.enabled", "needs a passing health-check test of this healthUrl first (POST …/health-check/test)")
	}
	return nil
}

// DecideHealthTested records a passing health-check test of url.
func (s *State) DecideHealthTested(url string, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	e := s.event(TypeHealthTested, now, actor)
	e.HealthTested = &HealthTested{URL: url}
	return []Event{e}, nil
}

// RateLog returns the newest up to n adjustments of the self-regulating
// rate, oldest first (newest last).
func (s *State) RateLog(n int) []RateChange {
	l := s.RateChanges
	if n >= 0 && len(l) > n {
		l = l[len(l)-n:]
	}
	return append([]RateChange(nil), l...)
}

func (s *State) applyRateAdjusted(e Event) {
	ch := *e.RateAdjusted
	s.Config.RatePerMinute = ch.To
	if s.Base != nil && !s.Base.rateOverridden(s.Phase) {
		b := *s.Base
		b.RatePerMinute = ch.To
		s.Base = &b
	}
	s.AutoFailures = ch.Failures
	s.applyPow(&ch)
	s.RateChanges = append(s.RateChanges, ch)
	if len(s.RateChanges) > MaxRateLog {
		s.RateChanges = append([]RateChange(nil), s.RateChanges[len(s.RateChanges)-MaxRateLog:]...)
	}
	keys := make([]string, 0, len(ch.Observed))
	for k := range ch.Observed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var obs []string
	for _, k := range keys {
		obs = append(obs, k+"="+strconv.FormatFloat(ch.Observed[k], 'f', -1, 64))
	}
	detail := fmt.Sprintf("%s → %s: %s (%s)", formatRate(ch.From), formatRate(ch.To), ch.Rule, ch.Reason)
	if len(obs) > 0 {
		detail += " " + strings.Join(obs, " ")
	}
	if e.Actor == "" {
		e.Actor = ActorAutoRate
	}
	s.audit(e, "rate-adjust", detail)
}
