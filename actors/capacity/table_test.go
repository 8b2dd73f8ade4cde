package capacity

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"
)

const sec = int64(time.Second)

// room is a table with a fake clock, applying what it decides as the grain
// does (epoch 0, no activation marker).
type room struct {
	t   *Table
	now int64
	log []Event
}

// newRoom returns a room of active slots (a 60 s session, a 10 s refresh)
// where each of ids has checked, in order, at the same instant.
func newRoom(active int, ids ...string) *room {
	r := &room{t: New(), now: 1_000 * sec}
	r.apply(r.t.Configure(Settings{Active: active, Session: 60 * time.Second, Refresh: 10 * time.Second}, "", "", r.now))
	for _, id := range ids {
		r.check(id)
	}
	return r
}

func (r *room) apply(evs []Event) {
	for _, e := range evs {
		r.t.Apply(0, e)
		r.log = append(r.log, e)
	}
}

func (r *room) check(id string) Status {
	r.apply(r.t.Check(id, r.now))
	return r.t.Status(id)
}

// restored is the table the grain would rebuild from r's log: every event
// through its encoding, then the whole through a snapshot.
func (r *room) restored(t *testing.T) *Table {
	t.Helper()
	got := New()
	for _, e := range r.log {
		b, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		got.Apply(0, d)
	}
	snap, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	restored := New()
	if err := json.Unmarshal(snap, restored); err != nil {
		t.Fatal(err)
	}
	return restored
}

func TestCheck(t *testing.T) {
	r := newRoom(2)
	for i, want := range []Status{
		{Admitted: true, Inside: 1},
		{Admitted: true, Inside: 2},
		{Position: 1, Waiting: 1, Inside: 2},
		{Position: 2, Waiting: 2, Inside: 2},
	} {
		got := r.check(fmt.Sprint("v", i))
		got.Expires = 0
		if got != want {
			t.Errorf("visitor %d: got %+v, want %+v", i, got, want)
		}
	}
	// v3 (second in line) checks first when v0 leaves: not its turn.
	r.apply(r.t.Release("v0", r.now))
	if st := r.check("v3"); st.Admitted || st.Position != 2 {
		t.Fatalf("second in line got %+v, want still waiting at 2", st)
	}
	if st := r.check("v2"); !st.Admitted {
		t.Fatalf("first in line got %+v, want admitted", st)
	}
	if st := r.check("v3"); st.Position != 1 || st.Waiting != 1 {
		t.Fatalf("v3 got %+v, want position 1 of 1", st)
	}
}

func TestSessionExpiry(t *testing.T) {
	r := newRoom(1, "a")
	if st := r.check("b"); st.Admitted {
		t.Fatalf("b admitted while a holds the only slot")
	}
	// a keeps making requests: the slot is kept after the last one.
	r.now += 50 * sec
	r.t.Touch([]string{"a"}, r.now)
	r.now += 50 * sec
	if st := r.check("b"); st.Admitted {
		t.Fatalf("b admitted 50 s after a's last request (session 60 s)")
	}
	r.now += 11 * sec
	if st := r.check("b"); !st.Admitted {
		t.Fatalf("b not admitted after a's session ended: %+v", st)
	}
	if st := r.check("a"); st.Admitted || st.Position != 1 {
		t.Fatalf("a after expiry got %+v, want new visitor at the end of the line", st)
	}
}

func TestSilentWaiterLosesPlace(t *testing.T) {
	r := newRoom(1, "in", "quiet", "keen")
	for i := 0; i < 4; i++ { // keen checks every 10 s, quiet never
		r.now += 10 * sec
		r.t.Touch([]string{"in"}, r.now)
		if st := r.check("keen"); i < 3 && st.Position != 2 {
			t.Fatalf("check %d: keen at %d, want 2 while quiet's place holds", i, st.Position)
		}
	}
	if st := r.t.Status("keen"); st.Position != 1 {
		t.Fatalf("keen at %d after quiet was silent 40 s, want 1", st.Position)
	}
	if st := r.check("quiet"); st.Position != 2 {
		t.Fatalf("quiet back at %d, want the end of the line (2)", st.Position)
	}
}

func TestReleaseFreesAtOnce(t *testing.T) {
	r := newRoom(1, "a", "b")
	r.apply(r.t.Release("a", r.now))
	if st := r.check("b"); !st.Admitted {
		t.Fatalf("b not admitted after a's release")
	}
	if evs := r.t.Release("nobody", r.now); evs != nil {
		t.Fatalf("release of an unknown visitor gave %v", evs)
	}
}

func TestReplay(t *testing.T) {
	r := newRoom(2)
	for i := 0; i < 6; i++ {
		r.check(fmt.Sprint("v", i))
		r.now += sec
	}
	r.apply(r.t.Release("v1", r.now))
	r.check("v2")
	got := r.restored(t)
	r.now += 1000 * sec // long down time: nobody loses a place
	got.Recovered(r.now)
	if !slices.Equal(got.Waiting(), r.t.Waiting()) || len(got.Inside) != len(r.t.Inside) {
		t.Fatalf("replayed line %v inside %v, want %v %v", got.Waiting(), got.Inside, r.t.Waiting(), r.t.Inside)
	}
	for id := range r.t.Inside {
		if st := got.Status(id); !st.Admitted || st.Expires < r.now {
			t.Fatalf("holder %s after recovery: %+v", id, st)
		}
	}
	if evs := got.Expire(r.now + sec); evs != nil {
		t.Fatalf("recovery expired %v", evs)
	}
}

func TestFencing(t *testing.T) {
	tb := New()
	tb.Apply(5, Event{Type: TypeActivated})
	tb.Apply(6, Event{Type: TypeConfigured, Epoch: 5, Settings: &Settings{Active: 1, Session: time.Second, Refresh: time.Second}})
	tb.Apply(7, Event{Type: TypeActivated})
	tb.Apply(8, Event{Type: TypeAdmitted, Epoch: 5, ID: "stale", Until: 1})
	if len(tb.Inside) != 0 {
		t.Fatalf("an event of a superseded activation was applied")
	}
}

// TestSimulation drives a room of 3 slots with visitors who arrive at
// random, check every refresh (some give up), stay a while once inside and
// leave by going quiet or by release. It checks after every step that never
// more than 3 are inside, and first come first served: a newcomer goes
// straight in only when nobody waits, and everyone who stood ahead of a
// visitor let in from the line was let in too, unless they lost the place.
func TestSimulation(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { simulate(t, seed) })
	}
}

type simVisitor struct {
	id       string
	arrive   int64
	giveUp   int64 // stops checking at this time while waiting
	stay     int64 // stays this long once inside
	release  bool
	inSince  int64
	admitted bool
	done     bool
}

func simulate(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	const active = 3
	r := newRoom(active)
	start := r.now
	var vs []*simVisitor
	for i := 0; i < 60; i++ {
		v := &simVisitor{id: fmt.Sprint("v", i), arrive: start + rng.Int63n(300)*sec, stay: (5 + rng.Int63n(60)) * sec, release: rng.Intn(3) == 0}
		v.giveUp = 1 << 62
		if rng.Intn(5) == 0 {
			v.giveUp = v.arrive + rng.Int63n(120)*sec
		}
		vs = append(vs, v)
	}
	ahead := map[string][]string{} // who stood ahead of each visitor let in
	everIn := map[string]bool{}
	lostPlace := map[string]bool{}
	for r.now = start; r.now < start+2000*sec; r.now += sec {
		for _, v := range vs {
			if v.done || r.now < v.arrive {
				continue
			}
			switch {
			case v.admitted && r.now-v.inSince >= v.stay:
				v.done = true
				if v.release {
					r.apply(r.t.Release(v.id, r.now))
				}
			case v.admitted:
				if rng.Intn(3) == 0 {
					r.t.Touch([]string{v.id}, r.now)
				}
			case r.now >= v.giveUp:
				v.done = true
			case (r.now-v.arrive)%(10*sec) == 0:
				evs := r.t.Check(v.id, r.now)
				for _, e := range evs {
					switch e.Type {
					case TypeAdmitted:
						everIn[e.ID] = true
						line := r.t.Waiting()
						i := slices.Index(line, e.ID)
						if i < 0 && len(line) > 0 {
							t.Fatalf("newcomer %s went in past %d waiting", e.ID, len(line))
						}
						if i > 0 {
							ahead[e.ID] = line[:i]
						}
					case TypeExpired:
						for _, id := range e.Left {
							lostPlace[id] = true
						}
					}
					r.apply([]Event{e})
				}
				if st := r.t.Status(v.id); st.Admitted {
					v.admitted, v.inSince = true, r.now
				}
			}
			if n := len(r.t.Inside); n > active {
				t.Fatalf("t=%ds: %d inside, more than %d", (r.now-start)/sec, n, active)
			}
		}
	}
	for id, before := range ahead {
		for _, a := range before {
			if !everIn[a] && !lostPlace[a] {
				t.Fatalf("%s was let in while %s, ahead of it, never was", id, a)
			}
		}
	}
	n := 0
	for _, v := range vs {
		if v.admitted {
			n++
		}
	}
	if n < 40 {
		t.Fatalf("only %d of 60 visitors ever got in", n)
	}
}
