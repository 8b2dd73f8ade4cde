package room

import (
	"math"
	"time"
)

// View is the part of a room's state that front nodes need to answer
// visitors without asking the grain: the admission line, the issued count,
// the pre-queue draws and the configuration. The grain publishes it on every
// change; fronts keep the one with the highest (Epoch, Version).
type View struct {
	ID      string `json:"id"`
	Epoch   int64  `json:"epoch"`
	Version uint64 `json:"version"`
	Exists  bool   `json:"exists"`
	Deleted bool   `json:"deleted"`
	// Config is the configuration in force: the operator's, with the
	// overrides of the scheduled event that shapes the room now (Phase).
	Config Config `json:"config"`
	// Base is the operator's configuration when it has events (nil
	// otherwise: then Config is the operator's).
	Base *Config `json:"base,omitempty"`
	// Phase names the event and stage whose overrides Config carries.
	Phase Phase `json:"phase,omitzero"`
	// CreatedAt and UpdatedAt are Unix nanoseconds.
	CreatedAt int64 `json:"createdAt"`
	UpdatedAt int64 `json:"updatedAt"`
	Line      Line  `json:"line"`
	// Issued is the highest number handed out.
	Issued uint64 `json:"issued"`
	// Draws are the pre-queue draws made so far, oldest first.
	Draws []Draw `json:"draws"`
	// Armed is the pending draw before a scheduled opening.
	Armed *Arm `json:"armed,omitempty"`
	// Abandoned counts numbers skipped as abandoned.
	Abandoned uint64 `json:"abandoned"`
	// Jumps are the numbers restores made nobody's, oldest first, and
	// Returned the places given to those whose tickets came back
	// (restore.go).
	Jumps    []Jump            `json:"jumps,omitempty"`
	Returned map[uint64]uint64 `json:"returned,omitempty"`
	// PowAuto is the proof of work pow.auto asks for now; nil while calm.
	PowAuto         *PowLevel `json:"powAuto,omitempty"`
	SecretSealed    []byte    `json:"secretSealed"`
	TicketKeySealed []byte    `json:"ticketKeySealed"`
}

// Settings is the operator's configuration as written, events included,
// without the overrides in force.
func (v *View) Settings() Config {
	if v.Base != nil {
		return *v.Base
	}
	return v.Config
}

// setConfig makes base the operator's configuration and its phase p's
// overrides the configuration in force.
func (v *View) setConfig(base Config, p Phase) {
	v.Phase = p
	if len(base.Events) == 0 {
		v.Base, v.Config, v.Phase = nil, base, Phase{}
		return
	}
	b := base
	v.Base = &b
	v.Config = base.Effective(p)
}

// Paused reports whether the operator has paused the room.
func (v *View) Paused() bool { return !v.Config.Active }

// PreQueue reports whether the room is before its scheduled opening (or at
// it, with the draw not yet made): numbers are issued, nobody is admitted.
func (v *View) PreQueue() bool { return v.Armed != nil }

// Cap is the highest value the line may take: the places handed out plus
// the burst. Capacity beyond it is not banked. It is never below the line's
// base, the value serving stood at when the line was last anchored: a rate
// or burst cut shrinks the burst, but serving must not go back.
func (v *View) Cap() float64 { return math.Max(float64(v.Places())+v.Config.Burst(), v.Line.Base) }

// ServingAt returns the admission line's value at now (Unix nanoseconds),
// in admission positions. It never decreases as now and Issued grow.
// In passthrough every issued number is admitted (outside a pre-queue).
func (v *View) ServingAt(now int64) float64 {
	s := math.Min(v.Line.At(now), v.Cap())
	if passthrough(&v.Config) && v.Armed == nil {
		return math.Max(s, float64(v.Places()))
	}
	return s
}

// Serving returns how many positions are admitted at now.
func (v *View) Serving(now int64) uint64 { return floor(v.ServingAt(now)) }

// Position returns number n's place in admission order: its place, or its
// drawn place when n was in a pre-queue. A jump number not yet placed
// (restore.go) stands behind every place handed out.
func (v *View) Position(n uint64) uint64 {
	c, ok := v.placeOf(n)
	if !ok {
		return v.Places() + 1
	}
	for i := len(v.Draws) - 1; i >= 0; i-- {
		if v.Draws[i].Contains(c) {
			return v.Draws[i].Position(c)
		}
	}
	return c
}

// PlaceAt is the inverse of Position for the places handed out: the place
// (before any draw) admitted at position p.
func (v *View) PlaceAt(p uint64) uint64 {
	for i := len(v.Draws) - 1; i >= 0; i-- {
		if v.Draws[i].Contains(p) {
			return v.Draws[i].Number(p)
		}
	}
	return p
}

// NumberAt is the number whose place is admitted at position p (for a
// place given to a returning jump number, the number handed out for it).
func (v *View) NumberAt(p uint64) uint64 { return v.expand(v.PlaceAt(p)) }

// Waiting is how many issued numbers are not yet admitted.
func (v *View) Waiting(now int64) uint64 {
	s, places := v.Serving(now), v.Places()
	if s >= places {
		return 0
	}
	return places - s
}

// Status is the answer to "where does number n stand?".
type Status struct {
	Number   uint64
	Position uint64
	// Drawn is true when Position comes from a pre-queue draw.
	Drawn    bool
	Serving  uint64
	Ahead    uint64
	Admitted bool
	Active   bool
	PreQueue bool
	// Mode is the room's mode (mode.go).
	Mode    string
	OpensAt *time.Time
	// EstimatedWait and RetryAfter are whole seconds.
	EstimatedWait int
	RetryAfter    int
}

// StatusOf computes n's status at now. n must have been issued.
func (v *View) StatusOf(n uint64, now int64) Status {
	st := Status{Number: n, Position: n, Active: v.Config.Active, PreQueue: v.PreQueue(), Mode: v.EffectiveMode()}
	if v.Config.OpensAt != nil && (st.PreQueue || len(v.Draws) > 0) {
		t := *v.Config.OpensAt
		st.OpensAt = &t
	}
	// Numbers issued before the draw was armed are not in the pre-queue:
	// arming an opening on a running room revokes nobody's admission, and
	// numbers of an earlier draw keep their drawn places.
	c, placed := v.placeOf(n)
	inPreQueue := st.PreQueue && placed && c > v.compact(v.Armed.From)
	switch {
	case !placed:
		// A jump number whose ticket has not come back: it would be
		// placed at the end of the line (restore.go).
		st.Position = v.Places() + 1
	case inPreQueue:
		st.Position = c
	default:
		st.Position = c
		for i := len(v.Draws) - 1; i >= 0; i-- {
			if v.Draws[i].Contains(c) {
				st.Position, st.Drawn = v.Draws[i].Position(c), true
				break
			}
		}
	}
	st.Serving = v.Serving(now)
	st.Admitted = placed && !inPreQueue && st.Position <= st.Serving
	if !st.Admitted && st.Position > st.Serving {
		st.Ahead = st.Position - st.Serving - 1
	}
	if st.PreQueue {
		// Everyone before the opening is equally far: their order is drawn.
		st.Ahead = 0
	}
	st.EstimatedWait, st.RetryAfter = v.estimate(st, now)
	return st
}

func (v *View) estimate(st Status, now int64) (wait, retry int) {
	switch {
	case st.Admitted:
		return 0, 1
	case st.PreQueue && st.OpensAt != nil:
		until := int(math.Ceil(float64(st.OpensAt.UnixNano()-now) / 1e9))
		if until < 0 {
			until = 0
		}
		return until, clampInt(until/10, 2, 30)
	case !st.Active, frozen(&v.Config):
		return 0, 10
	}
	rate := v.Config.RatePerMinute
	// Time until the line reaches the position, at the configured rate.
	need := float64(st.Position) - v.ServingAt(now)
	if need < 0 {
		need = 0
	}
	wait = int(math.Ceil(need / rate * 60))
	return wait, clampInt(wait/10, 2, 30)
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// Newer reports whether v supersedes o: a later activation, or a later
// version of the same one, or the same version with more numbers issued
// (joins change no version: they write no event).
func (v *View) Newer(o *View) bool {
	if v.Epoch != o.Epoch {
		return v.Epoch > o.Epoch
	}
	if v.Version != o.Version {
		return v.Version > o.Version
	}
	return v.Issued > o.Issued
}
