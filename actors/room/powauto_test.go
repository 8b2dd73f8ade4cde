package room_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// powRoom is a room config with pow.auto at 600 a minute (threshold 4×:
// 2,400 a minute, 40 a second).
func powRoom() room.Config {
	c := room.Config{Slug: "auto", Name: "Auto", RatePerMinute: 600, Active: true, Pow: room.Pow{Auto: true}}
	c.Normalize()
	return c
}

// pressureSim drives the controller at the grain's tick of 100 ms on a
// fake clock, joins arriving at perSecond, and applies its decisions as
// the grain would.
type pressureSim struct {
	p      room.PowPressure
	cfg    room.Config
	at     int64
	issued float64
	level  *room.PowLevel
	log    []room.PowDecision
}

const tick = 100 * time.Millisecond

// run advances d at perSecond joins and returns the time from the start
// of the run to the first change (-1 if none).
func (s *pressureSim) run(d time.Duration, perSecond float64) time.Duration {
	first := time.Duration(-1)
	for el := time.Duration(0); el < d; el += tick {
		s.at += int64(tick)
		s.issued += perSecond * tick.Seconds()
		s.p.Record(s.at, uint64(s.issued))
		dec := s.p.Decide(&s.cfg, s.level, s.at)
		if dec.Changed {
			s.level = dec.Level
			s.log = append(s.log, dec)
			if first < 0 {
				first = el + tick
			}
		}
	}
	return first
}

func TestPowAutoFloodAndCalm(t *testing.T) {
	s := &pressureSim{cfg: powRoom(), at: time.Unix(1_800_000_000, 0).UnixNano()}
	if got := s.run(time.Minute, 5); got >= 0 {
		t.Fatalf("calm minute at 5 a second: a change after %v (%v), want none", got, s.log)
	}
	// 500 a second: 30,000 a minute, 50× the rate, 12.5× the threshold:
	// 15 + 3 bits.
	on := s.run(10*time.Second, 500)
	if on < 0 || on > 2*time.Second || s.level == nil || s.level.Bits != 18 {
		t.Fatalf("flood: on after %v, at %+v by its end; want on within 2s, at 18 bits", on, s.level)
	}
	// On as soon as the window's inflow passes the threshold, raised as the
	// window fills with the flood.
	if r := s.log[0].Reason; !strings.Contains(r, "the admission rate of 600 (threshold 4×): proof of work at 15 bits") {
		t.Fatalf("first reason %q", r)
	}
	if r := s.log[len(s.log)-1].Reason; !strings.Contains(r, "× the admission rate of 600") || !strings.Contains(r, "18 bits") {
		t.Fatalf("last reason %q", r)
	}
	// Harder flood: raised at once.
	s.run(2*time.Second, 2000)
	if s.level == nil || s.level.Bits != 20 {
		t.Fatalf("harder flood: level %+v, want 20 bits", s.level)
	}
	// Between half and all of the threshold: stays on (hysteresis).
	if got := s.run(2*time.Minute, 30); got >= 0 {
		t.Fatalf("at 30 a second (above half the threshold): a change after %v, want none", got)
	}
	// Calm: lifted after CalmFor, not before.
	off := s.run(time.Minute, 5)
	if s.level != nil || off < room.CalmFor || off > room.CalmFor+room.PressureWindow+tick {
		t.Fatalf("calm: lifted after %v (level %+v), want after %v", off, s.level, room.CalmFor)
	}
	if r := s.log[len(s.log)-1].Reason; !strings.Contains(r, "lifted") {
		t.Fatalf("reason %q", r)
	}
}

// TestPowAutoBounds: the bits never exceed MaxPowBits and never fall below
// the room's; turning pow.auto off lifts the work at once; a count that
// goes back (a new activation) is no flood.
func TestPowAutoBounds(t *testing.T) {
	s := &pressureSim{cfg: powRoom(), at: time.Unix(1_800_000_000, 0).UnixNano()}
	s.cfg.Pow.Bits = 22
	s.run(2*time.Second, 1e6)
	if s.level == nil || s.level.Bits != room.MaxPowBits {
		t.Fatalf("huge flood: %+v, want %d bits", s.level, room.MaxPowBits)
	}
	s.cfg.Pow.Auto = false
	s.run(tick, 1e6)
	if s.level != nil || !strings.Contains(s.log[len(s.log)-1].Reason, "pow.auto turned off") {
		t.Fatalf("auto off: %+v %v", s.level, s.log)
	}
	var p room.PowPressure
	cfg := powRoom()
	p.Record(0, 1_000_000)
	p.Record(int64(500*time.Millisecond), 10)
	p.Record(int64(time.Second), 20)
	if d := p.Decide(&cfg, nil, int64(time.Second)); d.Changed || d.Inflow != 1200 {
		t.Fatalf("after a count went back: %+v, want 10 in half a second (1,200 a minute) and no change", d)
	}
}

// TestDecidePowAuto: a change is a rate-log entry that leaves the rate as
// it is; the state and its view carry the level, and replay restores it.
func TestDecidePowAuto(t *testing.T) {
	st := room.New("r1")
	var written []room.Event
	applyAll := func(_ *room.State, evs []room.Event) {
		for _, e := range evs {
			st.Apply(0, e)
			written = append(written, e)
		}
	}
	evs, err := st.DecideCreate(powRoom(), nil, nil, at(0), "admin", room.DrawKey{})
	if err != nil {
		t.Fatal(err)
	}
	applyAll(st, evs)
	on := room.PowDecision{Level: &room.PowLevel{Bits: 17}, Changed: true, Reason: "flood", Inflow: 9000}
	evs = st.DecidePowAuto(on, at(1))
	if len(evs) != 1 || evs[0].RateAdjusted.Rule != room.RulePowAuto || evs[0].Line != nil || evs[0].Actor != room.ActorPowAuto {
		t.Fatalf("events %+v, want one pow.auto entry that leaves the line", evs)
	}
	applyAll(st, evs)
	if ok, bits := st.View.PowInForce(); !ok || bits != 17 || st.Config.RatePerMinute != 600 {
		t.Fatalf("after on: pow %v %d, rate %v", ok, bits, st.Config.RatePerMinute)
	}
	if got := st.DecidePowAuto(on, at(2)); got != nil {
		t.Fatalf("the same level again: %+v, want nothing written", got)
	}
	replayed := room.New("r1")
	for _, e := range written {
		replayed.Apply(0, e)
	}
	if ok, bits := replayed.View.PowInForce(); !ok || bits != 17 {
		t.Fatalf("after replay: pow %v %d, want 17 bits", ok, bits)
	}
	applyAll(st, st.DecidePowAuto(room.PowDecision{Changed: true, Reason: "calm"}, at(3)))
	if ok, _ := st.View.PowInForce(); ok || st.PowAuto != nil {
		t.Fatal("after off: proof of work still in force")
	}
	log := st.RateLog(-1)
	if len(log) != 2 || log[0].Pow.Bits != 17 || log[1].Pow.Bits != 0 || log[1].Reason != "calm" {
		t.Fatalf("rate log %+v", log)
	}
}
