package room_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The committed draw's permutation is a bijection onto [From+1, To] and
// Number inverts Position, for sizes around the powers of two.
func TestCommittedDrawIsBijection(t *testing.T) {
	seed := sha256Sum([]byte("seed"))
	for _, tc := range []struct{ from, to uint64 }{
		{0, 1}, {0, 2}, {5, 8}, {0, 4}, {100, 107}, {0, 1024}, {3, 3 + 1025}, {0, 1 << 17}, {77, 77 + 65537}, {9, 9 + 200_000},
	} {
		d := room.Draw{From: tc.from, To: tc.to, Version: room.DrawVersion, Seed: seed}
		hit := make([]bool, tc.to-tc.from)
		for n := tc.from + 1; n <= tc.to; n++ {
			p := d.Position(n)
			if p <= tc.from || p > tc.to || hit[p-tc.from-1] {
				t.Fatalf("[%d, %d]: Position(%d) = %d outside or given twice", tc.from+1, tc.to, n, p)
			}
			hit[p-tc.from-1] = true
			if back := d.Number(p); back != n {
				t.Fatalf("[%d, %d]: Number(Position(%d)) = %d", tc.from+1, tc.to, n, back)
			}
		}
	}
}

// A number's drawn place has nothing to do with when it was drawn, and
// another seed is another order.
func TestCommittedDrawUncorrelated(t *testing.T) {
	const size = 100_000
	a := room.Draw{To: size, Version: room.DrawVersion, Seed: sha256Sum([]byte("a"))}
	b := room.Draw{To: size, Version: room.DrawVersion, Seed: sha256Sum([]byte("b"))}
	var sx, sy, sxx, syy, sxy float64
	same := 0
	for i := uint64(1); i <= size; i++ {
		x, y := float64(i), float64(a.Position(i))
		sx, sy, sxx, syy, sxy = sx+x, sy+y, sxx+x*x, syy+y*y, sxy+x*y
		if a.Position(i) == b.Position(i) {
			same++
		}
	}
	n := float64(size)
	r := (n*sxy - sx*sy) / ((n*sxx - sx*sx) * (n*syy - sy*sy))
	if r*r*(n*sxx-sx*sx)*(n*syy-sy*sy) >= 1e-4*(n*sxx-sx*sx)*(n*syy-sy*sy) {
		t.Errorf("Pearson r² too large: r = %v", r)
	}
	if same > 10 { // expected about 1
		t.Errorf("%d of %d places agree between two seeds", same, size)
	}
}

// Arming commits to the key's hash, the algorithm, the room and the
// closing time; moving the opening keeps the key and records the replaced
// hash; the draw reveals the committed key; re-arming after it commits a
// new key.
func TestDrawCommitment(t *testing.T) {
	cfg := baseConfig()
	cfg.OpensAt = timeAt(hour)
	if _, err := room.New("r").DecideCreate(cfg, nil, nil, at(0), "admin", room.DrawKey{Key: []byte("short"), Sealed: []byte("s")}); !errors.Is(err, room.ErrDrawKey) {
		t.Fatalf("create armed with a short key: got %v, want ErrDrawKey", err)
	}
	if _, err := room.New("r").DecideCreate(cfg, nil, nil, at(0), "admin", room.DrawKey{Key: testDrawKey.Key}); !errors.Is(err, room.ErrDrawKey) {
		t.Fatalf("create armed without the sealed key: got %v, want ErrDrawKey", err)
	}
	g := newRoom(t, cfg, at(0), 1000)
	c := g.st.Armed.Commit
	if c == nil || !bytes.Equal(c.KeyHash, sha256Sum(testDrawKey.Key)) || c.ClosesAt != cfg.OpensAt.UnixMilli() ||
		c.Slug != "sale" || c.Algorithm != room.DrawAlgorithm || c.Version != room.DrawVersion || !bytes.Equal(c.Hash, c.ComputeHash()) {
		t.Fatalf("commitment at creation: got %+v", c)
	}
	if !bytes.Equal(g.st.DrawKeySealed, testDrawKey.Sealed) {
		t.Fatalf("sealed key: got %q, want %q", g.st.DrawKeySealed, testDrawKey.Sealed)
	}
	first := c.Hash
	for range 30 {
		g.mustJoin(at(minute))
	}
	// An unrelated change keeps the commitment as it is.
	cfg.RatePerMinute = 1200
	g.configure(cfg, at(2*minute))
	if !bytes.Equal(g.st.Armed.Commit.Hash, first) {
		t.Fatal("a rate change recommitted the draw")
	}
	cfg.OpensAt = timeAt(2 * hour)
	g.configure(cfg, at(3*minute))
	m := g.st.Armed.Commit
	if bytes.Equal(m.Hash, first) || !bytes.Equal(m.KeyHash, c.KeyHash) || m.ClosesAt != cfg.OpensAt.UnixMilli() ||
		len(m.Previous) != 1 || !bytes.Equal(m.Previous[0], first) {
		t.Fatalf("after moving the opening: got %+v", m)
	}
	g = g.crash(at(4 * minute))
	if !bytes.Equal(g.st.Armed.Commit.Hash, m.Hash) {
		t.Fatal("the commitment changed across recovery")
	}
	if _, err := g.st.DecideDraw(at(2*hour), room.DrawInput{Key: sha256Sum([]byte("another key"))}); !errors.Is(err, room.ErrDrawKey) {
		t.Fatalf("draw with another key: got %v, want ErrDrawKey", err)
	}
	if evs := g.open(at(2*hour - 1)); evs != nil {
		t.Fatalf("draw before the opening: got %d events", len(evs))
	}
	if evs := g.st.DecideOpen(at(2*hour), []byte("fresh")); evs != nil {
		t.Fatal("a committed draw was made with a fresh key")
	}
	g.must(g.open(at(2 * hour)))
	d := g.st.Draws[0]
	if d.Version != room.DrawVersion || !bytes.Equal(d.Key, testDrawKey.Key) || !bytes.Equal(d.Seed, testDrawKey.Key) ||
		d.To != g.st.Issued || !bytes.Equal(d.Commit.Hash, m.Hash) || g.st.DrawKeySealed != nil {
		t.Fatalf("draw: got %+v", d)
	}
	for n := uint64(1); n <= d.To; n++ {
		x, _ := room.DrawPermute(d.Key, d.To, n-1)
		if d.Position(n) != x+1 {
			t.Fatalf("position of %d: got %d, want π(%d)+1 = %d", n, d.Position(n), n-1, x+1)
		}
	}
	// Re-arming after the draw commits a new key.
	next := room.DrawKey{Key: sha256Sum([]byte("next")), Sealed: []byte("sealed next")}
	cfg.OpensAt = timeAt(5 * hour)
	evs, err := g.st.DecideConfigure(cfg, at(3*hour), "admin", next)
	if err != nil {
		t.Fatal(err)
	}
	g.must(evs)
	if c := g.st.Armed.Commit; c == nil || !bytes.Equal(c.KeyHash, sha256Sum(next.Key)) || len(c.Previous) != 0 || g.st.Armed.From != d.To {
		t.Fatalf("re-armed: got %+v", g.st.Armed)
	}
	// The numbers of the draw made keep their drawn places (and are
	// admitted by them) while the next opening is armed.
	now := at(3*hour + minute)
	for n := uint64(1); n <= d.To; n++ {
		st := g.st.StatusOf(n, now)
		if !st.Drawn || st.Position != d.Position(n) || st.Admitted != (st.Position <= st.Serving) {
			t.Fatalf("number %d of the earlier draw while re-armed: got %+v, want position %d", n, st, d.Position(n))
		}
	}
}

// testChain is a beacon of one round every 3 s from t0.
var testChain = &room.Chain{Hash: sha256Sum([]byte("chain")), PublicKey: []byte("pk"), Scheme: "bls-unchained-g1-rfc9380",
	GenesisTime: time.Unix(0, t0).Unix(), PeriodSeconds: 3}

// With a beacon, the commitment names the first round published after the
// pre-queue closes; the opening closes the pre-queue, the draw waits for
// that round and mixes it into the seed with HMAC-SHA256, or states why it
// could not.
func TestDrawWithBeacon(t *testing.T) {
	cfg := baseConfig()
	cfg.OpensAt = timeAt(hour)
	g := activate(t, newMemLog(), "r1", at(0), 1000)
	dk := testDrawKey
	dk.Chain = testChain
	evs, err := g.st.DecideCreate(cfg, []byte("s"), []byte("t"), at(0), "admin", dk)
	if err != nil {
		t.Fatal(err)
	}
	g.must(evs)
	c := g.st.Armed.Commit
	// Round r is published at genesis + (r−1)·3 s: 1200 rounds in an hour,
	// so round 1201 at the opening itself, 1202 the first after it.
	if c.Round != 1202 || !bytes.Equal(c.Chain.Hash, testChain.Hash) {
		t.Fatalf("commitment: got round %d chain %x, want 1202 %x", c.Round, c.Chain.Hash, testChain.Hash)
	}
	for range 20 {
		g.mustJoin(at(minute))
	}
	if _, err := g.st.DecideDraw(at(hour), room.DrawInput{Key: testDrawKey.Key}); !errors.Is(err, room.ErrBeacon) {
		t.Fatalf("draw without the round or a reason: got %v, want ErrBeacon", err)
	}
	g.must(g.st.DecideClose(at(hour)))
	if g.st.DecideClose(at(hour+second)) != nil {
		t.Fatal("closed twice")
	}
	late := g.mustJoin(at(hour + second))
	g = g.crash(at(hour + 2*second))
	if cl := g.st.Armed.Closed; cl == nil || cl.To != 20 {
		t.Fatalf("closed after recovery: got %+v, want to 20", cl)
	}
	if st := g.st.StatusOf(late, at(hour+2*second)); st.Admitted {
		t.Fatalf("a join after the close admitted before the draw: %+v", st)
	}
	sig := []byte("the round's signature")
	sum := sha256.Sum256(sig)
	for _, b := range []room.BeaconRound{
		{Round: 1201, Randomness: sum[:], Signature: sig},
		{Round: 1202, Randomness: sha256Sum([]byte("other")), Signature: sig},
	} {
		if _, err := g.st.DecideDraw(at(hour+3*second), room.DrawInput{Key: testDrawKey.Key, Beacon: &b}); !errors.Is(err, room.ErrBeacon) {
			t.Fatalf("draw with round %d randomness %x: got %v, want ErrBeacon", b.Round, b.Randomness, err)
		}
	}
	round := room.BeaconRound{Round: 1202, Randomness: sum[:], Signature: sig}
	evs, err = g.st.DecideDraw(at(hour+3*second), room.DrawInput{Key: testDrawKey.Key, Beacon: &round})
	if err != nil {
		t.Fatal(err)
	}
	g.must(evs)
	d := g.st.Draws[0]
	m := hmac.New(sha256.New, testDrawKey.Key)
	m.Write(sum[:])
	if !bytes.Equal(d.Seed, m.Sum(nil)) || d.To != 20 || d.ClosedAt != at(hour) || d.Beacon.Round != 1202 {
		t.Fatalf("draw: got %+v", d)
	}
	if st := g.st.StatusOf(late, at(hour+3*second)); st.Drawn || st.Position != late {
		t.Fatalf("the join after the close: got %+v, want its own place behind the draw", st)
	}

	t.Run("round not had in time", func(t *testing.T) {
		g := activate(t, newMemLog(), "r1", at(0), 1000)
		evs, err := g.st.DecideCreate(cfg, []byte("s"), []byte("t"), at(0), "admin", dk)
		if err != nil {
			t.Fatal(err)
		}
		g.must(evs)
		g.mustJoin(at(minute))
		evs, err = g.st.DecideDraw(at(hour+time.Minute.Nanoseconds()), room.DrawInput{Key: testDrawKey.Key, BeaconMissing: "no answer from the beacon"})
		if err != nil {
			t.Fatal(err)
		}
		g.must(evs)
		if d := g.st.Draws[0]; d.Beacon != nil || d.BeaconMissing != "no answer from the beacon" || !bytes.Equal(d.Seed, testDrawKey.Key) {
			t.Fatalf("draw without its round: got %+v", d)
		}
	})
}

// A draw armed before draws were committed (an older log) is still made at
// the opening with a fresh key and the older permutation.
func TestUncommittedArmDrawsAsBefore(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 1000)
	cfg := baseConfig()
	cfg.OpensAt = timeAt(hour)
	e := room.Event{Type: room.TypeConfigured, Epoch: g.st.Epoch, At: at(second), Actor: "admin",
		Line: &room.Line{T0: at(second)}, Configured: &room.Configured{Config: cfg, Arm: &room.Arm{From: 0}}}
	g.must([]room.Event{e})
	for range 10 {
		g.mustJoin(at(minute))
	}
	if evs := g.open(at(hour)); evs != nil {
		t.Fatal("DecideDraw made an uncommitted draw")
	}
	g.must(g.st.DecideOpen(at(hour), []byte("k")))
	d := g.st.Draws[0]
	old := room.Draw{From: 0, To: 10, Key: []byte("k")}
	if d.Version != 0 || d.To != 10 {
		t.Fatalf("draw: got %+v", d)
	}
	for n := uint64(1); n <= 10; n++ {
		if d.Position(n) != old.Position(n) {
			t.Fatalf("position of %d: got %d, want %d", n, d.Position(n), old.Position(n))
		}
	}
}
