package capacity

import (
	"strings"
	"testing"
	"time"

	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

// powRoom is a room of one slot with pow_auto at 60 arrivals a minute and
// 4 bits, and its counter.
func powRoom() (*room, *PowCounter) {
	r := newRoom(1, "in")
	s := r.t.Settings
	s.Pow = PowAuto{PerMinute: 60, Bits: 4}
	r.apply(r.t.Configure(s, "", "", r.now))
	return r, &PowCounter{}
}

// flood is n arrivals over d, evenly, deciding after each as the grain
// does.
func (r *room) flood(p *PowCounter, n int, d time.Duration) {
	for range n {
		r.now += int64(d) / int64(n)
		p.Arrived(1)
		r.apply(p.Decide(r.t, r.now))
	}
}

// TestPowCounter: arrivals over the threshold turn the work on at its
// bits, more as they double; the change is an event with its reason, the
// statuses carry it, and replay keeps it; calm lifts it after CalmFor.
func TestPowCounter(t *testing.T) {
	r, p := powRoom()
	r.flood(p, 10, 20*time.Second) // 30 a minute: half the threshold
	if got := r.t.PowBits(); got != 0 {
		t.Fatalf("bits %d at half the threshold", got)
	}
	r, p = powRoom()
	r.flood(p, 30, time.Second) // 1,800 a minute: 30× the threshold
	if got := r.t.PowBits(); got != 4+4 {
		t.Fatalf("bits %d at 30× the threshold, want 8 (4 and one per doubling)", got)
	}
	if st := r.t.Status("in"); st.Pow != 8 {
		t.Fatalf("a status carries pow %d, want 8", st.Pow)
	}
	if st := r.t.Estimate(); st.Pow != 8 {
		t.Fatalf("an estimate carries pow %d, want 8", st.Pow)
	}
	var last Event
	for _, e := range r.log {
		if e.Type == TypePow {
			last = e
		}
	}
	if !strings.Contains(last.Reason, "passed pow_auto's 60 a minute") || last.Pow.Bits != 8 {
		t.Fatalf("last pow event %+v", last)
	}
	if got := r.restored(t).PowBits(); got != 8 {
		t.Fatalf("restored table asks %d bits, want 8", got)
	}

	// Half the threshold or more keeps it; below half for CalmFor lifts
	// it, not a moment sooner.
	for range 20 {
		r.flood(p, 1, 2*time.Second) // 30 a minute: half
	}
	if r.t.PowBits() != 8 {
		t.Fatal("lifted at half the threshold")
	}
	calm := r.now
	for r.now-calm < int64(rate.CalmFor) {
		r.now += int64(500 * time.Millisecond)
		if r.apply(p.Decide(r.t, r.now)); r.t.PowBits() == 0 && r.now-calm < int64(rate.CalmFor) {
			t.Fatalf("lifted %v into the calm", time.Duration(r.now-calm))
		}
	}
	r.now += int64(time.Second)
	r.apply(p.Decide(r.t, r.now))
	if r.t.PowBits() != 0 {
		t.Fatalf("still %d bits after %v of calm", r.t.PowBits(), time.Duration(r.now-calm))
	}
	if got := r.restored(t).PowBits(); got != 0 {
		t.Fatalf("restored table asks %d bits after the lift", got)
	}
}

// TestPowCounterOff: without pow_auto nothing is decided, however many
// arrive; turning it off while armed lifts the work.
func TestPowCounterOff(t *testing.T) {
	r := newRoom(1, "in")
	p := &PowCounter{}
	r.flood(p, 300, time.Second)
	if r.t.PowBits() != 0 || len(r.log) != 2 {
		t.Fatalf("pow_auto off: bits %d, %d events", r.t.PowBits(), len(r.log))
	}
	r, p = powRoom()
	r.flood(p, 30, time.Second)
	s := r.t.Settings
	s.Pow = PowAuto{}
	r.apply(r.t.Configure(s, "", "", r.now))
	r.now += int64(PowSample)
	r.apply(p.Decide(r.t, r.now))
	if r.t.PowBits() != 0 {
		t.Fatalf("pow_auto turned off: still %d bits", r.t.PowBits())
	}
}

func TestPowAutoValidate(t *testing.T) {
	base := Settings{Active: 1, Session: time.Minute, Refresh: time.Second}
	for _, p := range []PowAuto{{PerMinute: 0, Bits: 4}, {PerMinute: 60, Bits: 0}, {PerMinute: 60, Bits: 25}, {PerMinute: -1, Bits: 4}, {PerMinute: 60, Bits: 8, MaxBits: 7}, {PerMinute: 60, Bits: 8, MaxBits: 25}} {
		s := base
		s.Pow = p
		if s.Validate() == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	s := base
	s.Pow = PowAuto{PerMinute: 60, Bits: 24, MaxBits: 24}
	if err := s.Validate(); err != nil {
		t.Errorf("valid pow_auto refused: %v", err)
	}
}

// TestPowCounterMaxBits: the work rises no further than max_bits.
func TestPowCounterMaxBits(t *testing.T) {
	r, p := powRoom()
	s := r.t.Settings
	s.Pow.MaxBits = 6
	r.apply(r.t.Configure(s, "", "", r.now))
	r.flood(p, 300, time.Second) // 18,000 a minute: 300× the threshold
	if got := r.t.PowBits(); got != 6 {
		t.Fatalf("bits %d at 300× the threshold with max_bits 6, want 6", got)
	}
}
