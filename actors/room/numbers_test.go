package room_test

import (
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Invariant 1: numbers are strictly increasing and never issued twice, not
// after a crash, not after fail-over.
func TestNumbersIncreaseAcrossRecovery(t *testing.T) {
	type step struct {
		joins      int
		checkpoint bool // a checkpoint before the crash
		final      bool // a graceful stop (final checkpoint) instead of a crash
		snapshot   bool // a snapshot before the crash
	}
	for _, tc := range []struct {
		name  string
		block uint64
		steps []step
	}{
		{"crash inside the first block", 100, []step{{joins: 7}, {joins: 5}}},
		{"crash at a block boundary", 10, []step{{joins: 10}, {joins: 10}}},
		{"crash before any join", 10, []step{{joins: 0}, {joins: 3}}},
		{"crash after many blocks", 16, []step{{joins: 1000}, {joins: 1000}, {joins: 1}}},
		{"crash after a checkpoint", 50, []step{{joins: 120, checkpoint: true}, {joins: 30}}},
		{"crash after a snapshot", 50, []step{{joins: 120, snapshot: true}, {joins: 60}, {joins: 1}}},
		{"graceful stop", 50, []step{{joins: 120, final: true}, {joins: 30}}},
		{"graceful stop then crash", 50, []step{{joins: 120, final: true}, {joins: 30}, {joins: 5}}},
		{"crash then graceful stop", 50, []step{{joins: 70}, {joins: 30, final: true}, {joins: 5}}},
		{"repeated crashes without joins", 8, []step{{joins: 3}, {}, {}, {joins: 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := at(0)
			g := newRoom(t, baseConfig(), now, tc.block)
			var last, first uint64 // first: the number the next join must get, 0 if any
			seen := map[uint64]bool{}
			for i, s := range tc.steps {
				for range s.joins {
					now += ms
					n := g.mustJoin(now)
					if n <= last || seen[n] {
						t.Fatalf("step %d: got number %d after %d", i, n, last)
					}
					if first != 0 && n != first {
						t.Fatalf("step %d: first number after recovery got %d, want %d", i, n, first)
					}
					seen[n], last, first = true, n, 0
				}
				if s.checkpoint {
					g.must(g.st.DecideCheckpoint(now, false))
				}
				if s.snapshot {
					g.snapshot()
				}
				issued, reserved := g.st.Issued, g.st.Reserved
				if s.final {
					g.must(g.st.DecideCheckpoint(now, true))
				}
				now += second
				g = g.crash(now)
				want := reserved
				if s.final {
					want = issued
				}
				if g.st.Issued != want {
					t.Fatalf("step %d: issued after recovery got %d, want %d (reserved %d)", i, g.st.Issued, want, reserved)
				}
				first = want + 1
			}
		})
	}
}

// A graceful stop releases the rest of the reservation: the next activation
// continues exactly at Issued+1, without ghosts.
func TestFinalCheckpointContinuesWithoutGap(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 100)
	for i := range 42 {
		g.mustJoin(at(int64(i) * ms))
	}
	g.must(g.st.DecideCheckpoint(at(second), true))
	if g.st.Reserved != 42 || g.st.Issued != 42 {
		t.Fatalf("after final checkpoint: got reserved %d issued %d, want 42 42", g.st.Reserved, g.st.Issued)
	}
	g = g.crash(at(2 * second))
	if n := g.mustJoin(at(2 * second)); n != 43 {
		t.Fatalf("first number after graceful stop: got %d, want 43", n)
	}
}

// Fencing: a block belongs to an activation only if no newer Activated
// stands before its Reserved; on replay the superseded activation's events
// after the newer marker are ignored.
func TestFencingIgnoresSupersededActivation(t *testing.T) {
	log := newMemLog()
	a := activate(t, log, "r1", at(0), 100)
	evs, err := a.st.DecideCreate(baseConfig(), nil, nil, at(0), "admin", room.DrawKey{})
	if err != nil {
		t.Fatal(err)
	}
	a.must(evs)
	var fromA []uint64
	for i := range 10 {
		fromA = append(fromA, a.mustJoin(at(int64(i)*ms)))
	}
	// B takes over while A still runs (split brain).
	b := activate(t, log, "r1", at(second), 100)
	if b.epoch <= a.epoch {
		t.Fatalf("epochs: got a=%d b=%d, want b > a", a.epoch, b.epoch)
	}
	if b.st.Issued != 100 {
		t.Fatalf("b starts at: got issued %d, want 100 (a's reservation)", b.st.Issued)
	}
	// A goes on handing out its verified block: numbers below B's.
	for i := range 90 {
		fromA = append(fromA, a.mustJoin(at(second+int64(i)*ms)))
	}
	// A's next writes stand after B's marker: A learns it is superseded,
	// and on replay they count for nothing.
	if err := a.reserve(at(2 * second)); err != errSuperseded {
		t.Fatalf("a's reservation after b's marker: got %v, want errSuperseded", err)
	}
	slow := baseConfig()
	slow.RatePerMinute = 1
	cfgEvs, err := a.st.DecideConfigure(slow, at(2*second), "admin", testDrawKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.commit(cfgEvs); err != errSuperseded {
		t.Fatalf("a's configuration after b's marker: got %v, want errSuperseded", err)
	}
	var fromB []uint64
	for i := range 150 {
		fromB = append(fromB, b.mustJoin(at(3*second+int64(i)*ms)))
	}
	seen := map[uint64]string{}
	for _, n := range fromA {
		seen[n] = "a"
	}
	for _, n := range fromB {
		if seen[n] != "" {
			t.Fatalf("number %d issued by both activations", n)
		}
		seen[n] = "b"
	}
	if b.st.Config.RatePerMinute != 600 {
		t.Fatalf("b's rate: got %v, want 600 (a's late configuration ignored)", b.st.Config.RatePerMinute)
	}

	// A third activation replays everything: it sees B's reservations, not
	// A's late one, and continues above every number handed out.
	c := b.crash(at(4 * second))
	if c.st.Config.RatePerMinute != 600 {
		t.Fatalf("rate after replay: got %v, want 600", c.st.Config.RatePerMinute)
	}
	if c.st.Reserved != b.st.Reserved {
		t.Fatalf("reserved after replay: got %d, want %d (a's late block ignored)", c.st.Reserved, b.st.Reserved)
	}
	n := c.mustJoin(at(4 * second))
	for m, who := range seen {
		if m >= n {
			t.Fatalf("after replay got %d, not above %d issued by %s", n, m, who)
		}
	}
}

// Events of another epoch are ignored whatever they say; markers always
// start a new activation.
func TestApplyIgnoresForeignEpoch(t *testing.T) {
	st := room.New("r1")
	st.Apply(0, room.Event{Type: room.TypeActivated, Activated: &room.Activated{Nonce: "a"}})
	cfg := baseConfig()
	cfg.Normalize()
	st.Apply(1, room.Event{Type: room.TypeCreated, Epoch: 0, Created: &room.Created{Config: cfg}})
	st.Apply(2, room.Event{Type: room.TypeReserved, Epoch: 0, Reserved: &room.Reserved{UpTo: 10}})
	st.Apply(3, room.Event{Type: room.TypeActivated, Activated: &room.Activated{Nonce: "b"}})
	v := st.Version
	for i, e := range []room.Event{
		{Type: room.TypeReserved, Epoch: 0, Reserved: &room.Reserved{UpTo: 1000}},
		{Type: room.TypeReserved, Epoch: 7, Reserved: &room.Reserved{UpTo: 1000}},
		{Type: room.TypeDeleted, Epoch: 0},
		{Type: room.TypeCheckpoint, Epoch: 0, Checkpoint: &room.Checkpoint{Issued: 3, Final: true}},
	} {
		st.Apply(int64(4+i), e)
	}
	if st.Reserved != 10 || st.Deleted || st.Version != v || st.Epoch != 3 {
		t.Fatalf("got reserved %d deleted %v version %d epoch %d, want 10 false %d 3", st.Reserved, st.Deleted, st.Version, st.Epoch, v)
	}
	st.Apply(8, room.Event{Type: room.TypeReserved, Epoch: 3, Reserved: &room.Reserved{UpTo: 20}})
	if st.Reserved != 20 {
		t.Fatalf("own epoch's reservation: got reserved %d, want 20", st.Reserved)
	}
}
