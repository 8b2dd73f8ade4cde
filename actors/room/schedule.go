package room

import (
	"fmt"
	"math"
	"sort"
	"time"
	"unicode/utf8"
)

// MaxEvents bounds a room's scheduled events (Config.Events).
const MaxEvents = 5

// Period is one scheduled event of a room (the site field "events"): from
// StartsAt until EndsAt its overrides replace the room's own settings; with
// PrequeueFrom, numbers taken from then until StartsAt form a pre-queue
// whose order is drawn at StartsAt, exactly like the room's opensAt. At
// EndsAt the room returns to its own settings, or takes EndMode and keeps it
// until the next event starts. Events never overlap, pre-queues included:
// a pre-queue admits nobody, so it cannot run beside another event.
type Period struct {
	// Name labels the event for the operator ("Main sale").
	Name         string     `json:"name,omitempty"`
	StartsAt     time.Time  `json:"startsAt"`
	EndsAt       time.Time  `json:"endsAt"`
	PrequeueFrom *time.Time `json:"prequeueFrom,omitempty"`
	// RatePerMinute, when set, is the admission rate during the event.
	RatePerMinute float64 `json:"ratePerMinute,omitempty"`
	// Mode, when set, is the room's mode during the event.
	Mode string `json:"mode,omitempty"`
	// Message, when set, replaces the room's message during the event.
	Message *string `json:"message,omitempty"`
	// Pow, when set, replaces the proof-of-work settings during the event.
	Pow *Pow `json:"pow,omitempty"`
	// AutoRate, when set, bounds the self-regulating rate during the event.
	AutoRate *RateBounds `json:"autoRate,omitempty"`
	// EndMode, when set, is the mode the room takes at EndsAt.
	EndMode string `json:"endMode,omitempty"`
}

// RateBounds are the self-regulating rate's bounds an event may override.
type RateBounds struct {
	MinRate float64 `json:"minRate"`
	MaxRate float64 `json:"maxRate"`
}

// Stages of a Phase.
const (
	StagePrequeue = "prequeue" // before StartsAt, from PrequeueFrom
	StageLive     = "live"     // from StartsAt until EndsAt
	StageAfter    = "after"    // after EndsAt, under the event's EndMode
)

// Phase names the settings in force: Event is the 1-based index of the
// event in Config.Events that shapes them (0: the room's own settings),
// Stage where the instant falls in it. It is written in the log with every
// configuration, so replay never recomputes it.
type Phase struct {
	Event int    `json:"event,omitempty"`
	Stage string `json:"stage,omitempty"`
}

// from is when the event begins to shape the room: its pre-queue or its start.
func (p *Period) from() time.Time {
	if p.PrequeueFrom != nil {
		return *p.PrequeueFrom
	}
	return p.StartsAt
}

// PhaseAt is the phase of configuration c at instant at. It is pure: the
// same configuration and instant give the same phase on every node.
func PhaseAt(c *Config, at time.Time) Phase {
	var after Phase
	var lastEnd time.Time
	for i := range c.Events {
		p := &c.Events[i]
		switch {
		case !at.Before(p.StartsAt) && at.Before(p.EndsAt):
			return Phase{Event: i + 1, Stage: StageLive}
		case !at.Before(p.from()) && at.Before(p.StartsAt):
			return Phase{Event: i + 1, Stage: StagePrequeue}
		case !at.Before(p.EndsAt) && p.EndsAt.After(lastEnd):
			lastEnd, after = p.EndsAt, Phase{}
			if p.EndMode != "" {
				after = Phase{Event: i + 1, Stage: StageAfter}
			}
		}
	}
	return after
}

// Effective is configuration c with the overrides of phase p applied: the
// settings the room runs on. A phase that does not fit c (an event index
// out of range) leaves c as it is.
func (c Config) Effective(p Phase) Config {
	if p.Event < 1 || p.Event > len(c.Events) {
		return c
	}
	e := &c.Events[p.Event-1]
	if p.Stage == StageAfter {
		c.Mode = e.EndMode
		return c
	}
	if e.RatePerMinute > 0 {
		c.RatePerMinute = e.RatePerMinute
	}
	if e.Mode != "" {
		c.Mode = e.Mode
	}
	if e.Message != nil {
		c.Message = *e.Message
		c.Messages = nil // the event's message, whatever the language
	}
	if e.Pow != nil {
		c.Pow = *e.Pow
	}
	if e.AutoRate != nil {
		c.AutoRate.MinRate, c.AutoRate.MaxRate = e.AutoRate.MinRate, e.AutoRate.MaxRate
		if c.AutoRate.Enabled {
			c.RatePerMinute = c.AutoRate.Clamp(c.RatePerMinute)
		}
	}
	if e.PrequeueFrom != nil {
		t := e.StartsAt
		c.OpensAt = &t
	}
	return c
}

// rateOverridden reports whether phase p sets the rate of c, so that a
// rate the controller or the operator sets applies to the event only.
func (c *Config) rateOverridden(p Phase) bool {
	if p.Event < 1 || p.Event > len(c.Events) || p.Stage == StageAfter {
		return false
	}
	e := &c.Events[p.Event-1]
	return e.RatePerMinute > 0 || e.AutoRate != nil
}

// NextChange is the first instant after at where c's phase changes, if any.
func NextChange(c *Config, at time.Time) (time.Time, bool) {
	var next time.Time
	for i := range c.Events {
		p := &c.Events[i]
		for _, t := range []time.Time{p.from(), p.StartsAt, p.EndsAt} {
			if t.After(at) && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next, !next.IsZero()
}

// Settings are what a visitor meets at an instant: the answer of the
// site preview.
type Settings struct {
	At            time.Time `json:"at"`
	Mode          string    `json:"mode"`
	Active        bool      `json:"active"`
	RatePerMinute float64   `json:"ratePerMinute"`
	Message       string    `json:"message"`
	Pow           Pow       `json:"pow"`
	// Event is the 0-based index of the event shaping the settings, nil
	// for the room's own settings; EventName is its name.
	Event     *int   `json:"event"`
	EventName string `json:"eventName,omitempty"`
	// Stage is "prequeue", "live", "after" or "" (the room's own settings).
	Stage string `json:"stage,omitempty"`
	// PreQueue is true when numbers taken at the instant wait for a draw.
	PreQueue   bool       `json:"preQueue"`
	OpensAt    *time.Time `json:"opensAt"`
	NextChange *time.Time `json:"nextChange"`
}

// Preview is what configuration c gives at instant at.
func Preview(c *Config, at time.Time) Settings {
	p := PhaseAt(c, at)
	e := c.Effective(p)
	s := Settings{At: at.UTC(), Mode: modeOf(&e), Active: e.Active, RatePerMinute: e.RatePerMinute,
		Message: e.Message, Pow: e.Pow, Stage: p.Stage}
	if s.Pow.AutoFactor == 0 { // rooms configured before pow.auto
		s.Pow.AutoFactor = DefaultPowAutoFactor
	}
	if p.Event > 0 {
		i := p.Event - 1
		s.Event, s.EventName = &i, c.Events[i].Name
	}
	if e.OpensAt != nil && e.OpensAt.After(at) {
		o := e.OpensAt.UTC()
		s.OpensAt, s.PreQueue = &o, true
	}
	if n, ok := NextChange(c, at); ok {
		n = n.UTC()
		s.NextChange = &n
	}
	return s
}

func (p *Period) normalize() {
	if p.Pow != nil {
		w := *p.Pow
		if w.Bits == 0 {
			w.Bits = DefaultPowBits
		}
		if w.AutoFactor == 0 {
			w.AutoFactor = DefaultPowAutoFactor
		}
		p.Pow = &w
	}
}

// validateEvents checks the events: at most MaxEvents, each inside itself
// (end after start, pre-queue before start) and with valid overrides, and
// no two overlapping, pre-queues included.
func (c *Config) validateEvents() error {
	if len(c.Events) > MaxEvents {
		return invalid("events", "at most %d events", MaxEvents)
	}
	if len(c.Events) > 0 && c.OpensAt != nil {
		return invalid("opensAt", "must be empty when the room has events: give the event a prequeueFrom")
	}
	for i := range c.Events {
		if err := c.Events[i].validate(fmt.Sprintf("events[%d]", i)); err != nil {
			return err
		}
	}
	order := make([]int, len(c.Events))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return c.Events[order[a]].from().Before(c.Events[order[b]].from()) })
	for k := 1; k < len(order); k++ {
		prev, cur := &c.Events[order[k-1]], &c.Events[order[k]]
		if cur.from().Before(prev.EndsAt) {
			field := "startsAt"
			if cur.PrequeueFrom != nil {
				field = "prequeueFrom"
			}
			return invalid(fmt.Sprintf("events[%d].%s", order[k], field), "overlaps events[%d], which ends at %s",
				order[k-1], prev.EndsAt.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

func (p *Period) validate(f string) error {
	if utf8.RuneCountInString(p.Name) > 100 {
		return invalid(f+".name", "at most 100 characters")
	}
	if !plausible(p.StartsAt) {
		return invalid(f+".startsAt", "is required, an RFC 3339 time")
	}
	if !plausible(p.EndsAt) || !p.EndsAt.After(p.StartsAt) {
		return invalid(f+".endsAt", "must be an RFC 3339 time after startsAt")
	}
	if p.PrequeueFrom != nil && (!plausible(*p.PrequeueFrom) || !p.PrequeueFrom.Before(p.StartsAt)) {
		return invalid(f+".prequeueFrom", "must be an RFC 3339 time before startsAt")
	}
	if p.RatePerMinute != 0 && !(p.RatePerMinute >= 1 && p.RatePerMinute <= 1e7) {
		return invalid(f+".ratePerMinute", "must be at least 1 (and at most 10,000,000)")
	}
	if p.Mode != "" && !knownMode(p.Mode) {
		return invalid(f+".mode", "must be one of queue, passthrough, soldOut, maintenance, queueAll")
	}
	if p.EndMode != "" && !knownMode(p.EndMode) {
		return invalid(f+".endMode", "must be one of queue, passthrough, soldOut, maintenance, queueAll")
	}
	if p.Message != nil && utf8.RuneCountInString(*p.Message) > 2000 {
		return invalid(f+".message", "at most 2000 characters")
	}
	if p.Pow != nil {
		if p.Pow.Bits < 8 || p.Pow.Bits > 24 {
			return invalid(f+".pow.bits", "must be 8–24")
		}
		if !(p.Pow.AutoFactor >= 1.5 && p.Pow.AutoFactor <= 100) {
			return invalid(f+".pow.autoFactor", "must be 1.5–100 times the admission rate")
		}
	}
	if b := p.AutoRate; b != nil {
		if !(b.MinRate >= 1 && b.MinRate <= 1e7) || math.IsInf(b.MaxRate, 0) {
			return invalid(f+".autoRate.minRate", "must be at least 1 (and at most 10,000,000)")
		}
		if !(b.MaxRate >= b.MinRate && b.MaxRate <= 1e7) {
			return invalid(f+".autoRate.maxRate", "must be at least minRate (and at most 10,000,000)")
		}
	}
	return nil
}

// plausible reports whether t is a real instant an operator schedules,
// not a zero or mistyped time.
func plausible(t time.Time) bool { return t.Year() >= 2000 && t.Year() <= 2999 }

func knownMode(m string) bool {
	for _, k := range Modes {
		if m == k {
			return true
		}
	}
	return false
}
