package capacity

import (
	"errors"
	"fmt"
	"time"

	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

// Proof of work that turns itself on in a capacity room. Arrivals (first
// requests without a cookie, over every proxy node) are the inflow: those
// that reached the line, and those a proxy answered with a challenge
// instead. When they pass PowAuto.PerMinute, new arrivals must solve a
// proof of work before they are given a place, harder as the inflow
// doubles; the work is lifted after rate.CalmFor below half the threshold.
// The controller is actors/room's (room.PowPressure); a change is an event
// of the room's log with its reason, and every status carries the bits in
// force, so each proxy node learns them with its next answer.

// PowAuto is a capacity room's automatic proof of work (the proxy's
// `pow_auto { arrivals_per_minute  bits }`). The zero value is off.
type PowAuto struct {
	// PerMinute is the arrivals a minute, over every proxy node, past
	// which new arrivals must prove work.
	PerMinute float64 `json:"perMinute"`
	// Bits is the work asked at the threshold, one more per doubling of
	// the inflow beyond it, up to MaxBits (0: room.MaxPowBits).
	Bits    int `json:"bits"`
	MaxBits int `json:"maxBits,omitempty"`
}

// Defaults of pow_auto when its block leaves them out.
// Chromium solves some 190,000 hashes a second here: 14 bits take 0.1 s
// on average, 20 bits 5.5 s.
const (
	DefaultPowAutoPerMinute = 600
	DefaultPowAutoBits      = 14
	DefaultPowAutoMaxBits   = 20
)

// ErrPowAuto is returned by Validate for pow_auto settings out of range.
var ErrPowAuto = errors.New("capacity room: pow_auto needs arrivals_per_minute above 0, bits from 1 to 24 and max_bits from bits to 24")

// On reports whether the room turns proof of work on by itself.
func (p PowAuto) On() bool { return p.PerMinute > 0 }

func (p PowAuto) validate() error {
	if p == (PowAuto{}) {
		return nil
	}
	if !(p.PerMinute > 0) || p.PerMinute > 1e9 || p.Bits < 1 || p.Bits > rate.MaxPowBits ||
		p.MaxBits != 0 && (p.MaxBits < p.Bits || p.MaxBits > rate.MaxPowBits) {
		return ErrPowAuto
	}
	return nil
}

// TypePow is the event of a change of the automatic proof of work: Pow
// holds the bits now asked (0: lifted) and Reason why.
const TypePow = "pow"

// PowBits is the work new arrivals must prove now; 0 for none.
func (t *Table) PowBits() int {
	if t.Pow == nil {
		return 0
	}
	return t.Pow.Bits
}

// PowTrigger is the controller's threshold for this room's settings.
func (t *Table) PowTrigger() rate.PowTrigger {
	p := t.Settings.Pow
	return rate.PowTrigger{On: p.On(), Threshold: p.PerMinute, Bits: p.Bits, MaxBits: p.MaxBits,
		Armed: func(inflow float64, bits int) string {
			return fmt.Sprintf("arrivals %s a minute passed pow_auto's %s a minute: proof of work at %d bits",
				rate.FormatRate(inflow), rate.FormatRate(p.PerMinute), bits)
		}}
}

// DecidePow returns the event writing decision d, or none when it changes
// nothing against the level in force.
func (t *Table) DecidePow(d rate.PowDecision, now int64) []Event {
	if !d.Changed {
		return nil
	}
	lv := rate.PowLevel{}
	if d.Level != nil {
		lv = *d.Level
	}
	if lv.Bits == t.PowBits() {
		return nil
	}
	return []Event{{Type: TypePow, At: now, Pow: &lv, Reason: d.Reason}}
}

// PowSample is how often the grain hands the arrivals count to the
// controller: the controller's window keeps a bounded number of samples,
// so recording every request of a flood would shrink it to milliseconds.
const PowSample = 100 * time.Millisecond

// PowCounter counts a room's arrivals for the controller: first requests
// that reached the room, and those a proxy node answered with a challenge
// instead (reported with its renewal batches). It hands the count to the
// controller at most every PowSample. It is not in the log: a new
// activation starts counting afresh, from the level the log says is in
// force. Not safe for concurrent use: the room's owner serialises calls.
type PowCounter struct {
	arrivals uint64
	last     int64 // when the count was last recorded
	pressure rate.PowPressure
}

// Arrived counts n arrivals.
func (p *PowCounter) Arrived(n uint64) { p.arrivals += n }

// Decide records the count at now and returns the event of a change the
// controller decides for table t, or none. Every proxy node sends a batch
// every half second, so Decide is called often enough to lift the work
// when calm.
func (p *PowCounter) Decide(t *Table, now int64) []Event {
	if !t.Settings.Pow.On() && t.Pow == nil {
		p.pressure, p.last = rate.PowPressure{}, 0
		return nil
	}
	if p.last != 0 && now-p.last < int64(PowSample) {
		return nil
	}
	p.last = now
	p.pressure.Record(now, p.arrivals)
	return t.DecidePow(p.pressure.Judge(t.PowTrigger(), t.Pow, now), now)
}
