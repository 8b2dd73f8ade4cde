package capacity

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// TestLineInsertMatchesSlice inserts by arrival time, appends and removes
// at random, and compares every place with a slice kept sorted by arrival.
func TestLineInsertMatchesSlice(t *testing.T) {
	type w struct {
		id string
		at int64
	}
	rng := rand.New(rand.NewSource(2))
	l := newLine()
	var want []w
	clock := int64(0)
	for step := 0; step < 20000; step++ {
		clock += rng.Int63n(3)
		switch k := rng.Intn(6); {
		case k < 2 || len(want) == 0:
			id := fmt.Sprint("a", step)
			l.push(id, clock)
			want = append(want, w{id, clock})
		case k < 4:
			id, at := fmt.Sprint("i", step), clock-rng.Int63n(40)
			l.insert(id, at)
			i := sort.Search(len(want), func(i int) bool { return want[i].at > at })
			want = slices.Insert(want, i, w{id, at})
		default:
			i := rng.Intn(len(want))
			if rng.Intn(2) == 0 {
				i = 0
			}
			l.remove(want[i].id)
			want = slices.Delete(want, i, i+1)
		}
		if step%89 == 0 || step == 19999 {
			for i, v := range want {
				if n, ok := l.ahead(v.id); !ok || n != i {
					t.Fatalf("step %d: %s ahead %d %v, want %d", step, v.id, n, ok, i)
				}
			}
			times := l.times()
			for i, v := range want {
				if times[i] != v.at {
					t.Fatalf("step %d: time %d of %s, want %d", step, times[i], v.id, v.at)
				}
			}
			at := clock - rng.Int63n(40)
			if got, exp := l.before(at), sort.Search(len(want), func(i int) bool { return want[i].at > at }); got != exp {
				t.Fatalf("step %d: before(%d) = %d, want %d", step, at, got, exp)
			}
		}
	}
}

// arrive and confirm are a first request and a return with the cookie.
func (r *room) arrive(id string) Status {
	evs := r.t.Arrive(id, r.now)
	r.apply(evs)
	if r.t.known(id) {
		return r.t.Status(id)
	}
	return r.t.Estimate()
}

func (r *room) confirm(id string, arrived int64) Status {
	r.apply(r.t.Confirm(id, arrived, r.now))
	return r.t.Status(id)
}

// behindProvisional returns a room of one slot, held by "in", where id made
// a first request at the time returned and "w" checked a second later.
func behindProvisional(id string) (*room, int64) {
	r := newRoom(1, "in")
	at := r.now
	r.arrive(id)
	r.now += sec
	r.check("w")
	return r, at
}

func TestProvisionalPlaceKeepsArrivalOrder(t *testing.T) {
	r := newRoom(1, "in", "w1") // w1 real, at 1000 s
	r.now += sec
	at := r.now
	n := len(r.log)
	if st := r.arrive("p"); !st.Provisional || st.Position != 2 || st.Waiting != 2 {
		t.Fatalf("first request got %+v, want provisional, about 1 ahead", st)
	}
	if len(r.log) != n {
		t.Fatalf("a provisional place wrote %v", r.log[n:])
	}
	r.now += sec
	r.check("w2") // real, after p's arrival: p's place is not counted
	if st := r.t.Status("w2"); st.Position != 2 {
		t.Fatalf("w2 at %d, want 2: a provisional place is counted by nobody", st.Position)
	}
	r.now += 9 * sec // p's page refreshes with its cookie
	if st := r.confirm("p", at); st.Position != 2 || st.Waiting != 3 {
		t.Fatalf("p confirmed at %+v, want 2 of 3 (after w1, before w2)", st)
	}
	if st := r.t.Status("w2"); st.Position != 3 {
		t.Fatalf("w2 at %d after p's return, want 3", st.Position)
	}
	if e := r.log[len(r.log)-1]; e.Type != TypeQueued || e.Arrived != at {
		t.Fatalf("confirmation logged %+v, want queued with the arrival time", e)
	}
	// The order survives replay and a snapshot.
	if got := r.restored(t); !slices.Equal(got.Waiting(), []string{"w1", "p", "w2"}) {
		t.Fatalf("replayed line %v, want [w1 p w2]", got.Waiting())
	}
	// A later return is the waiter's ordinary check.
	r.now += sec
	if st := r.confirm("p", at); st.Position != 2 {
		t.Fatalf("p's next check at %d, want 2", st.Position)
	}
}

func TestProvisionalPlaceGoneAfterWindow(t *testing.T) {
	r, at := behindProvisional("late")
	win := int64(r.t.Settings.ProvisionalWindow())
	r.now = at + win + 1
	if st := r.confirm("late", at); st.Position != 2 {
		t.Fatalf("return past the window at %d, want the end (2)", st.Position)
	}
	r2, at := behindProvisional("onTime")
	r2.now = at + win
	if st := r2.confirm("onTime", at); st.Position != 1 {
		t.Fatalf("return at the window's end at %d, want 1", st.Position)
	}
}

func TestProvisionalFirstRequestAdmittedWhenFree(t *testing.T) {
	r := newRoom(2)
	st := r.arrive("a")
	if !st.Admitted || st.Expires != r.now+int64(r.t.Settings.ProvisionalWindow()) {
		t.Fatalf("first request in an empty room got %+v, want in for one window", st)
	}
	// Never back: the slot frees after the window, not the session.
	r.now += int64(r.t.Settings.ProvisionalWindow())
	if st := r.check("b"); !st.Admitted || st.Inside != 1 {
		t.Fatalf("b got %+v, want in with a alone gone", st)
	}
	// Back with its cookie: a full session.
	r.arrive("c")
	r.now += sec
	if st := r.check("c"); st.Expires != r.now+int64(r.t.Settings.Session) {
		t.Fatalf("c's return got %+v, want a full session", st)
	}
}

func TestProvisionalConfirmedIntoFreeSlot(t *testing.T) {
	r, at := behindProvisional("p")
	r.apply(r.t.Release("in", r.now))
	if st := r.confirm("p", at); !st.Admitted {
		t.Fatalf("p, first by arrival with a slot free, got %+v", st)
	}
	if st := r.check("w"); st.Admitted || st.Position != 1 {
		t.Fatalf("w got %+v, want first in line", st)
	}
}

func TestConfirmRefusesFutureOrForeignTimes(t *testing.T) {
	r := newRoom(1, "in", "w")
	for _, arrived := range []int64{0, -5, r.now, r.now + sec} {
		id := fmt.Sprint("x", arrived)
		if st := r.confirm(id, arrived); st.Position != r.t.Status(id).Waiting {
			t.Fatalf("arrived %d: place %d, want the end", arrived, st.Position)
		}
	}
}

// TestProvisionalSimulation runs a room of 3 slots through an hour of
// arrivals by browsers (which keep cookies and come back every refresh,
// some late) and a flood of clients that drop cookies. After every step:
// never more than 3 inside, no cookie dropper ever holds a place, and the
// line is in order of first arrival; at the end every browser got in.
func TestProvisionalSimulation(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { simulateProvisional(t, seed) })
	}
}

func simulateProvisional(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	const active = 3
	r := newRoom(active)
	start := r.now
	type browser struct {
		id             string
		arrive, next   int64
		stay, inSince  int64
		admitted, done bool
		first          bool
	}
	var bs []*browser
	for i := 0; i < 60; i++ {
		a := start + rng.Int63n(900)*sec
		bs = append(bs, &browser{id: fmt.Sprint("b", i), arrive: a, next: a, stay: (5 + rng.Int63n(30)) * sec})
	}
	arrivedAt := map[string]int64{}
	refresh := int64(r.t.Settings.Refresh)
	for r.now = start; r.now < start+3600*sec; r.now += sec {
		for k := 0; k < 20; k++ { // the flood: a new client every request
			r.apply(r.t.Arrive(fmt.Sprint("f", r.now, ".", k), r.now))
		}
		for _, b := range bs {
			if b.done || r.now < b.next {
				continue
			}
			switch {
			case b.admitted && r.now-b.inSince >= b.stay:
				b.done = true
				continue
			case b.admitted:
				r.t.Touch([]string{b.id}, r.now)
				b.next = r.now + sec
				continue
			case !b.first:
				b.first = true
				arrivedAt[b.id] = r.now
				r.apply(r.t.Arrive(b.id, r.now))
			default:
				r.apply(r.t.Confirm(b.id, arrivedAt[b.id], r.now))
			}
			if st := r.t.Status(b.id); st.Admitted {
				b.admitted, b.inSince = true, r.now
			}
			b.next = r.now + refresh + rng.Int63n(3)*sec // the page reloads, a little late
		}
		if n := len(r.t.Inside); n > active {
			t.Fatalf("t=%ds: %d inside", (r.now-start)/sec, n)
		}
		line := r.t.Waiting()
		for i, id := range line {
			if id[0] == 'f' {
				t.Fatalf("t=%ds: cookie dropper %s holds place %d", (r.now-start)/sec, id, i+1)
			}
			if i > 0 && arrivedAt[line[i-1]] > arrivedAt[id] {
				t.Fatalf("t=%ds: %s (arrived %d) stands ahead of %s (arrived %d)", (r.now-start)/sec, line[i-1], arrivedAt[line[i-1]], id, arrivedAt[id])
			}
		}
	}
	for _, b := range bs {
		if !b.admitted {
			t.Fatalf("%s, who kept its cookie, never got in (status %+v)", b.id, r.t.Status(b.id))
		}
	}
}

// TestFloodLogBudget: first requests that never come back, 1,000 a second
// for a minute from ever new ids, write at most one admission per slot per
// provisional window and one expiry a second, however many they are.
func TestFloodLogBudget(t *testing.T) {
	const active = 5
	r := newRoom(active)
	n := len(r.log)
	start := r.now
	for r.now = start; r.now < start+60*sec; r.now += sec / 1000 {
		r.apply(r.t.Arrive(fmt.Sprint("f", r.now), r.now))
	}
	counts := map[string]int{}
	for _, e := range r.log[n:] {
		counts[e.Type]++
	}
	window := int64(r.t.Settings.ProvisionalWindow())
	if limit := active * int(60*sec/window+1); counts[TypeAdmitted] > limit || counts[TypeAdmitted] < active {
		t.Errorf("%d admissions in a minute, want %d–%d", counts[TypeAdmitted], active, limit)
	}
	if counts[TypeExpired] > 61 || counts[TypeQueued] != 0 || len(r.t.Waiting()) != 0 {
		t.Errorf("%d expiries, %d places queued, %d waiting; want at most 61, none, none",
			counts[TypeExpired], counts[TypeQueued], len(r.t.Waiting()))
	}
}
