package room

import (
	"fmt"
	"math"
	"time"
)

// Proof of work that turns itself on (pow.auto). The controller is pure:
// the grain records the issued count at each tick, asks for a decision, and
// writes a change as a rate-log entry (rule RulePowAuto) whose Pow field
// the state applies; replay restores the level, so a new owner goes on
// from it.
//
// It arms when new numbers are issued faster than AutoFactor times the
// admission rate over the last PressureWindow: the line then grows that
// many times faster than it drains, the mark of a flood from many
// addresses (one address alone is held by its budget). The bits rise with
// the pressure, one per doubling beyond the threshold, up to MaxPowBits,
// and never fall while armed. It disarms only after CalmFor below half the
// threshold: the work itself calms a flood of bots, and must not lift the
// moment it does.

// RulePowAuto is the rule of a rate-log entry that changes the automatic
// proof of work.
const RulePowAuto = "pow.auto"

// Bounds of the controller.
const (
	// PressureWindow is the span over which the inflow is measured.
	PressureWindow = time.Second
	// CalmFor is how long the inflow must stay below half the threshold
	// before the work is lifted.
	CalmFor = 30 * time.Second
	// MaxPowBits is the most the controller asks for.
	MaxPowBits = 24
	// DefaultPowAutoFactor is the threshold, in multiples of the
	// admission rate, when the operator sets none.
	DefaultPowAutoFactor = 4
	// pressureSamples bounds the samples kept: at the grain's tick of
	// 100 ms a window holds ten.
	pressureSamples = 64
)

// PowLevel is the proof of work the controller asks for; Bits 0 in a
// rate-log entry means it was lifted.
type PowLevel struct {
	Bits int `json:"bits"`
}

// PowDecision is the controller's answer to one observation.
type PowDecision struct {
	// Level is the work to ask for from now on; nil when none.
	Level *PowLevel
	// Changed reports whether Level differs from the one in force.
	Changed bool
	// Reason explains a change, for the rate log and the dashboard.
	Reason string
	// Inflow is new numbers per minute over the window (0 until the
	// window holds two samples).
	Inflow float64
}

type issuedAt struct {
	at     int64 // Unix nanoseconds
	issued uint64
}

// PowPressure is the controller's memory: the issued counts of the last
// window and when the inflow last fell calm. It is not in the log; a new
// activation starts with an empty window. Not safe for concurrent use:
// the room grain owns it.
type PowPressure struct {
	samples   []issuedAt // oldest first, within PressureWindow of the newest
	calmSince int64      // when the inflow fell below half the threshold while armed; 0 otherwise
}

// Record notes the issued count at at (Unix nanoseconds). Samples older
// than the window are dropped; a count that went back (a new activation's
// view) starts the window again.
func (p *PowPressure) Record(at int64, issued uint64) {
	if n := len(p.samples); n > 0 && (issued < p.samples[n-1].issued || at < p.samples[n-1].at) {
		p.samples = p.samples[:0]
	}
	p.samples = append(p.samples, issuedAt{at, issued})
	drop := 0
	for drop < len(p.samples)-1 && at-p.samples[drop+1].at >= int64(PressureWindow) {
		drop++
	}
	if len(p.samples)-drop > pressureSamples {
		drop = len(p.samples) - pressureSamples
	}
	p.samples = append(p.samples[:0], p.samples[drop:]...)
}

// inflow is new numbers per minute over the samples, 0 while they span
// less than a quarter of the window.
func (p *PowPressure) inflow() float64 {
	if len(p.samples) < 2 {
		return 0
	}
	first, last := p.samples[0], p.samples[len(p.samples)-1]
	span := last.at - first.at
	if span < int64(PressureWindow)/4 {
		return 0
	}
	return float64(last.issued-first.issued) / (float64(span) / float64(time.Minute))
}

// Decide compares the inflow with cfg's threshold and returns the work to
// ask for, given the level in force (nil: none) at at.
func (p *PowPressure) Decide(cfg *Config, cur *PowLevel, at int64) PowDecision {
	threshold := cfg.Pow.autoFactor() * cfg.RatePerMinute
	return p.Judge(PowTrigger{On: cfg.Pow.Auto, Threshold: threshold, Bits: cfg.Pow.Bits,
		Armed: func(inflow float64, bits int) string {
			return fmt.Sprintf("inflow %s a minute is %s× the admission rate of %s (threshold %s×): proof of work at %d bits",
				formatRate(inflow), formatRate(inflow/cfg.RatePerMinute), formatRate(cfg.RatePerMinute),
				formatRate(cfg.Pow.autoFactor()), bits)
		}}, cur, at)
}

// PowTrigger is what the controller compares the inflow with: a rate
// room's multiple of its admission rate, or a capacity room's arrivals a
// minute.
type PowTrigger struct {
	// On is pow.auto; off lifts any level in force.
	On bool
	// Threshold is the inflow a minute that arms the work.
	Threshold float64
	// Bits is the work asked at the threshold; one more per doubling of
	// the inflow beyond it, up to MaxBits (0: MaxPowBits).
	Bits, MaxBits int
	// Armed explains a rise, given the inflow a minute and the new bits.
	Armed func(inflow float64, bits int) string
}

// Judge compares the inflow with t and returns the work to ask for, given
// the level in force (nil: none) at at.
func (p *PowPressure) Judge(t PowTrigger, cur *PowLevel, at int64) PowDecision {
	d := PowDecision{Level: cur, Inflow: p.inflow()}
	if !t.On {
		p.calmSince = 0
		if cur != nil {
			d.Level, d.Changed, d.Reason = nil, true, "pow.auto turned off: proof of work lifted"
		}
		return d
	}
	threshold := t.Threshold
	switch {
	case d.Inflow >= threshold:
		p.calmSince = 0
		most := MaxPowBits
		if t.MaxBits > 0 {
			most = min(most, t.MaxBits)
		}
		bits := min(most, max(t.Bits, t.Bits+int(math.Log2(d.Inflow/threshold))))
		if cur == nil || bits > cur.Bits {
			d.Level, d.Changed = &PowLevel{Bits: bits}, true
			d.Reason = t.Armed(d.Inflow, bits)
		}
	case cur == nil:
		p.calmSince = 0
	case d.Inflow >= threshold/2:
		p.calmSince = 0
	case p.calmSince == 0:
		p.calmSince = at
	case at-p.calmSince >= int64(CalmFor):
		p.calmSince = 0
		d.Level, d.Changed = nil, true
		d.Reason = fmt.Sprintf("inflow below %s a minute (half the threshold) for %s: proof of work lifted",
			formatRate(threshold/2), CalmFor)
	}
	return d
}

// FormatRate writes a rate as the controllers' reasons do: at most two
// decimals.
func FormatRate(v float64) string { return formatRate(v) }

// autoFactor is AutoFactor, or its default for a configuration written
// before it existed.
func (p Pow) autoFactor() float64 {
	if p.AutoFactor == 0 {
		return DefaultPowAutoFactor
	}
	return p.AutoFactor
}

// PowInForce returns whether joins need proof of work now, and how many
// bits: the operator's setting, or the controller's level when higher.
func (v *View) PowInForce() (on bool, bits int) {
	p := v.Config.Pow
	if p.Enabled {
		on, bits = true, p.Bits
	}
	if p.Auto && v.PowAuto != nil {
		on, bits = true, max(bits, v.PowAuto.Bits)
	}
	return on, bits
}

// DecidePowAuto writes decision d as a rate-log entry that leaves the rate
// as it is: none when it changes nothing against the level in force now.
func (s *State) DecidePowAuto(d PowDecision, now int64) []Event {
	if !s.Live() || !d.Changed || samePow(d.Level, s.PowAuto) {
		return nil
	}
	lv := PowLevel{}
	if d.Level != nil {
		lv = *d.Level
	}
	ch := RateChange{At: time.Unix(0, now).UTC(), From: s.Config.RatePerMinute, To: s.Config.RatePerMinute,
		Rule: RulePowAuto, Reason: d.Reason, Observed: map[string]float64{"inflow": round2(d.Inflow)},
		Failures: s.AutoFailures, Pow: &lv}
	return []Event{s.rateEvent(ch, now, ActorPowAuto)}
}

// ActorPowAuto is the audit actor of the controller's changes.
const ActorPowAuto = "pow-auto"

func samePow(a, b *PowLevel) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// applyPow sets the level a rate-log entry carries, if any.
func (s *State) applyPow(ch *RateChange) {
	switch {
	case ch.Pow == nil:
	case ch.Pow.Bits == 0:
		s.PowAuto = nil
	default:
		lv := *ch.Pow
		s.PowAuto = &lv
	}
}
