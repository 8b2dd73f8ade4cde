package membership

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A member of three (m0 at peer a) that loses sight of both others asks
// the witness: silent others are gone (it stays), others heartbeating
// unseen mean it is cut off (it ends), a log out of reach ends it, and a
// restarted peer that heartbeats under a new identity before the member
// list takes it in does not end it.
func TestPartitionWitness(t *testing.T) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	setup := func() (*PartitionWatch, *Witness, *error) {
		var got error
		wit := NewWitness(memlog.New(), "a", "m0", []string{"a", "b", "c"}, log, t0)
		w := &PartitionWatch{quorum: 2, grace: 2 * time.Second, fail: func(err error) { got = err }, witness: wit, log: log}
		w.onTopology(memberIDs(3), at(0))
		return w, wit, &got
	}
	// beats has b and c heartbeat under ids idB and m2 every 500 ms from
	// from to to, with the log answering each round.
	beats := func(wit *Witness, idB string, from, to int) {
		for ms := from; ms <= to; ms += 500 {
			wit.observe("b", idB, int64(ms), true, at(ms))
			wit.observe("c", "m2", int64(ms), true, at(ms))
			wit.logOK = at(ms)
		}
	}
	only := map[string]bool{"m0": true}

	t.Run("the others died", func(t *testing.T) {
		w, wit, got := setup()
		beats(wit, "m1", 0, 0)
		w.onTopology(only, at(100))
		for ms := 500; ms <= 2_500; ms += 500 {
			wit.logOK = at(ms)
		}
		if w.check(at(2_500)) || *got != nil {
			t.Fatalf("failed although the others are silent in the log: %v", *got)
		}
		if !w.staying {
			t.Fatal("not staying after the others were found gone")
		}
	})
	t.Run("cut off while the others heartbeat", func(t *testing.T) {
		w, wit, got := setup()
		w.onTopology(only, at(100))
		beats(wit, "m1", 0, 2_500)
		if w.check(at(2_500)) {
			t.Fatal("failed before the others were seen heartbeating for the settle time")
		}
		beats(wit, "m1", 3_000, 7_000)
		if !w.check(at(7_000)) || *got == nil || !strings.Contains((*got).Error(), "cut off from the others") {
			t.Fatalf("got %v, want a failure: cut off", *got)
		}
	})
	t.Run("the log out of reach", func(t *testing.T) {
		w, _, got := setup()
		w.onTopology(only, at(100))
		if !w.check(at(2_500)) || *got == nil || !strings.Contains((*got).Error(), "cannot ask the log") {
			t.Fatalf("got %v, want a failure: the log out of reach", *got)
		}
	})
	t.Run("a restarted peer joins", func(t *testing.T) {
		w, wit, got := setup()
		beats(wit, "m1", 0, 0)
		w.onTopology(map[string]bool{"m0": true, "m2": true}, at(100))
		w.onTopology(only, at(200))
		for ms := 500; ms <= 2_500; ms += 500 {
			wit.logOK = at(ms)
		}
		// c died too; b comes back as m1b and heartbeats before the
		// member list has it.
		wit.observe("b", "m1b", 1, true, at(2_500))
		if w.check(at(2_600)) {
			t.Fatal("failed on a restarted peer's first heartbeat")
		}
		beats(wit, "m1b", 3_000, 4_000)
		w.onTopology(map[string]bool{"m0": true, "m1b": true}, at(4_100))
		if w.check(at(9_000)) || *got != nil {
			t.Fatalf("failed after the restarted peer joined: %v", *got)
		}
	})
}

// Two witnesses on one log read each other's heartbeats.
func TestWitnessRound(t *testing.T) {
	l := memlog.New()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	peers := []string{"a", "b", "c"}
	a := NewWitness(l, "a", "ida", peers, log, time.Now())
	b := NewWitness(l, "b", "idb", peers, log, time.Now())
	ctx := context.Background()
	for range 2 {
		if err := a.round(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.round(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.round(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := a.beats["b"]; got == nil || got.id != "idb" || got.seq != 2 {
		t.Fatalf("a's view of b: %+v, want id idb at heartbeat 2", got)
	}
	if got := a.beats["c"]; got == nil || got.id != "" {
		t.Fatalf("a's view of c (never started): %+v", got)
	}
}
