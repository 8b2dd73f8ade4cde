package room_test

import (
	"errors"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// A batch takes count consecutive numbers from the reservation, or none at
// all: it is never split around a reservation, and batches and single
// joins interleave without a number issued twice (invariant 1), also across
// a crash.
func TestJoinBatch(t *testing.T) {
	now := at(0)
	g := newRoom(t, baseConfig(), now, 100)
	if _, err := g.st.JoinBatch(10, now); !errors.Is(err, room.ErrNeedBlock) {
		t.Fatalf("batch before any reservation: got %v, want ErrNeedBlock", err)
	}
	if err := g.reserve(now); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i, count := range []uint64{1, 30, 1, 60} {
		now += ms
		first, err := g.st.JoinBatch(count, now)
		if err != nil {
			t.Fatalf("batch %d of %d: %v", i, count, err)
		}
		if first != last+1 {
			t.Fatalf("batch %d: got first %d, want %d", i, first, last+1)
		}
		last = first + count - 1
	}
	if last != 92 || g.st.Issued != 92 {
		t.Fatalf("after the batches: got last %d issued %d, want 92", last, g.st.Issued)
	}
	if _, err := g.st.JoinBatch(9, now); !errors.Is(err, room.ErrNeedBlock) {
		t.Fatalf("batch larger than the rest of the block: got %v, want ErrNeedBlock", err)
	}
	if g.st.Issued != 92 {
		t.Fatalf("a refused batch issued numbers: issued %d", g.st.Issued)
	}
	if n := g.mustJoin(now); n != 93 {
		t.Fatalf("single join after batches: got %d, want 93", n)
	}
	g = g.crash(now + ms)
	if err := g.reserve(now + 2*ms); err != nil {
		t.Fatal(err)
	}
	first, err := g.st.JoinBatch(5, now+2*ms)
	if err != nil {
		t.Fatal(err)
	}
	if first <= 100 {
		t.Fatalf("first number after the crash: got %d, want above the reservation 100", first)
	}
	if _, err := g.st.JoinBatch(0, now); !errors.Is(err, room.ErrNeedBlock) {
		t.Fatalf("empty batch: got %v, want ErrNeedBlock", err)
	}
}

// Invariant 4 and 5 hold for batches as for single joins: below the rate
// the whole batch is admitted at once; a paused room issues nothing.
func TestJoinBatchAdmittedAndPaused(t *testing.T) {
	now := at(0)
	cfg := baseConfig()
	cfg.RatePerMinute = 6000
	g := newRoom(t, cfg, now, 100)
	if err := g.reserve(now); err != nil {
		t.Fatal(err)
	}
	now += 60_000 * ms
	first, err := g.st.JoinBatch(3, now)
	if err != nil {
		t.Fatal(err)
	}
	for n := first; n < first+3; n++ {
		if st := g.st.View.StatusOf(n, now); !st.Admitted {
			t.Fatalf("number %d below the rate: got admitted false", n)
		}
	}
	cfg.Active = false
	g.configure(cfg, now)
	if _, err := g.st.JoinBatch(3, now); !errors.Is(err, room.ErrPaused) {
		t.Fatalf("paused: got %v, want ErrPaused", err)
	}
}
