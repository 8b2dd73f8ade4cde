package room

import "math"

// Line is the admission line: the number (in admission order) up to which
// visitors are admitted at time t is Base + Rate × (t − T0) / 1 min. It
// changes only at events, so any node holding it answers status questions
// with arithmetic alone.
type Line struct {
	Base float64 `json:"base"`
	// T0 is the anchor time in Unix nanoseconds.
	T0 int64 `json:"t0"`
	// Rate is admissions per minute; 0 while the line is frozen (paused, or
	// before a scheduled opening).
	Rate float64 `json:"rate"`
}

const nanosPerMinute = 60e9

// At returns the line's value at t (Unix nanoseconds). Before T0 it is Base.
func (l Line) At(t int64) float64 {
	if t <= l.T0 || l.Rate == 0 {
		return l.Base
	}
	return l.Base + l.Rate*float64(t-l.T0)/nanosPerMinute
}

// anchor returns the same line re-expressed from t, optionally at a new
// rate, so that a rate change keeps the line continuous.
func (l Line) anchor(t int64, rate float64) Line {
	return Line{Base: l.At(t), T0: t, Rate: rate}
}

// capped returns the line clamped so that it does not run ahead of limit at
// t: capacity nobody used is not banked (docs/architecture.md, invariant 3).
func (l Line) capped(t int64, limit float64) Line {
	if l.At(t) > limit {
		return Line{Base: limit, T0: t, Rate: l.Rate}
	}
	return l
}

// floor returns ⌊v⌋ as a count of numbers, never negative.
func floor(v float64) uint64 {
	if v <= 0 || math.IsNaN(v) {
		return 0
	}
	return uint64(math.Floor(v + 1e-9))
}
