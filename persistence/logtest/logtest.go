// Package logtest is the conformance suite every persistence.Log
// implementation passes: the embedded file log, and Kafka.
package logtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// Run runs the suite. open returns a fresh, empty log; reopen, when not nil,
// closes the given log and opens the same storage again, so that durability
// across a restart is checked.
func Run(t *testing.T, open func(t *testing.T) persistence.Log, reopen func(t *testing.T, l persistence.Log) persistence.Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stream := func(t *testing.T) string { return fmt.Sprintf("room-%s-%d", t.Name(), time.Now().UnixNano()) }

	t.Run("AppendReplayOrder", func(t *testing.T) {
		l := open(t)
		defer l.Close()
		s := stream(t)
		var want [][]byte
		for i := 0; i < 50; i++ {
			d := []byte(fmt.Sprintf("event-%03d", i))
			want = append(want, d)
			offs, err := l.Append(ctx, s, d)
			if err != nil || len(offs) != 1 {
				t.Fatalf("append %d: offs %v err %v", i, offs, err)
			}
		}
		got := replayAll(t, ctx, l, s, -1)
		if len(got) != len(want) {
			t.Fatalf("got %d records, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Data, want[i]) {
				t.Fatalf("record %d: got %q, want %q", i, got[i].Data, want[i])
			}
			if i > 0 && got[i].Offset <= got[i-1].Offset {
				t.Fatalf("offsets not increasing: %d then %d", got[i-1].Offset, got[i].Offset)
			}
		}
	})

	t.Run("BatchOffsetsAndReplayAfter", func(t *testing.T) {
		l := open(t)
		defer l.Close()
		s := stream(t)
		offs, err := l.Append(ctx, s, []byte("a"), []byte("b"), []byte("c"))
		if err != nil || len(offs) != 3 {
			t.Fatalf("append: %v %v", offs, err)
		}
		got := replayAll(t, ctx, l, s, offs[0])
		if len(got) != 2 || string(got[0].Data) != "b" || string(got[1].Data) != "c" {
			t.Fatalf("replay after %d: got %v", offs[0], got)
		}
		if got[0].Offset != offs[1] || got[1].Offset != offs[2] {
			t.Fatalf("replayed offsets %d,%d, want %d,%d", got[0].Offset, got[1].Offset, offs[1], offs[2])
		}
		last, err := l.Replay(ctx, s, offs[2], func(persistence.Record) error { t.Fatal("nothing expected"); return nil })
		if err != nil || last != offs[2] {
			t.Fatalf("empty replay: last %d err %v, want %d", last, err, offs[2])
		}
	})

	t.Run("StreamsAreSeparate", func(t *testing.T) {
		l := open(t)
		defer l.Close()
		a, b := stream(t)+"-a", stream(t)+"-b"
		for i := 0; i < 10; i++ {
			mustAppend(t, ctx, l, a, fmt.Sprintf("a%d", i))
			mustAppend(t, ctx, l, b, fmt.Sprintf("b%d", i))
		}
		for _, tc := range []struct{ stream, prefix string }{{a, "a"}, {b, "b"}} {
			got := replayAll(t, ctx, l, tc.stream, -1)
			if len(got) != 10 {
				t.Fatalf("%s: got %d records, want 10", tc.stream, len(got))
			}
			for i, r := range got {
				if want := fmt.Sprintf("%s%d", tc.prefix, i); string(r.Data) != want {
					t.Fatalf("%s record %d: got %q, want %q", tc.stream, i, r.Data, want)
				}
			}
		}
		if got := replayAll(t, ctx, l, stream(t)+"-none", -1); len(got) != 0 {
			t.Fatalf("unknown stream: got %d records", len(got))
		}
	})

	t.Run("ConcurrentAppends", func(t *testing.T) {
		l := open(t)
		defer l.Close()
		s := stream(t)
		const writers, each = 8, 25
		Parallel(t, writers, each, func(w, i int) error {
			_, err := l.Append(ctx, s, []byte(fmt.Sprintf("w%d-%d", w, i)))
			return err
		})
		got := replayAll(t, ctx, l, s, -1)
		if len(got) != writers*each {
			t.Fatalf("got %d records, want %d", len(got), writers*each)
		}
		seen := map[string]bool{}
		for _, r := range got {
			if seen[string(r.Data)] {
				t.Fatalf("duplicate record %q", r.Data)
			}
			seen[string(r.Data)] = true
		}
	})

	t.Run("Snapshots", func(t *testing.T) {
		l := open(t)
		defer l.Close()
		s := stream(t)
		if _, ok, err := l.LoadSnapshot(ctx, s); err != nil || ok {
			t.Fatalf("fresh stream: ok %v err %v, want no snapshot", ok, err)
		}
		for i, d := range []string{"one", "two"} {
			if err := l.SaveSnapshot(ctx, s, persistence.Snapshot{Offset: int64(i + 10), Data: []byte(d)}); err != nil {
				t.Fatal(err)
			}
		}
		snap, ok, err := l.LoadSnapshot(ctx, s)
		if err != nil || !ok || snap.Offset != 11 || string(snap.Data) != "two" {
			t.Fatalf("got %+v ok %v err %v, want offset 11 data two", snap, ok, err)
		}
	})

	if reopen == nil {
		return
	}
	t.Run("DurableAcrossReopen", func(t *testing.T) {
		l := open(t)
		s := stream(t)
		offs := mustAppend(t, ctx, l, s, "x", "y")
		if err := l.SaveSnapshot(ctx, s, persistence.Snapshot{Offset: offs[0], Data: []byte("snap")}); err != nil {
			t.Fatal(err)
		}
		l = reopen(t, l)
		defer l.Close()
		got := replayAll(t, ctx, l, s, -1)
		if len(got) != 2 || string(got[0].Data) != "x" || string(got[1].Data) != "y" {
			t.Fatalf("after reopen: got %v", got)
		}
		snap, ok, err := l.LoadSnapshot(ctx, s)
		if err != nil || !ok || string(snap.Data) != "snap" || snap.Offset != offs[0] {
			t.Fatalf("snapshot after reopen: %+v ok %v err %v", snap, ok, err)
		}
		more := mustAppend(t, ctx, l, s, "z")
		if more[0] <= offs[1] {
			t.Fatalf("offset after reopen %d not above %d", more[0], offs[1])
		}
	})
}

func mustAppend(t *testing.T, ctx context.Context, l persistence.Log, s string, data ...string) []int64 {
	t.Helper()
	var bs [][]byte
	for _, d := range data {
		bs = append(bs, []byte(d))
	}
	offs, err := l.Append(ctx, s, bs...)
	if err != nil {
		t.Fatalf("append to %s: %v", s, err)
	}
	return offs
}

func replayAll(t *testing.T, ctx context.Context, l persistence.Log, s string, after int64) []persistence.Record {
	t.Helper()
	var got []persistence.Record
	if _, err := l.Replay(ctx, s, after, func(r persistence.Record) error {
		got = append(got, persistence.Record{Offset: r.Offset, Data: append([]byte(nil), r.Data...)})
		return nil
	}); err != nil {
		t.Fatalf("replay %s: %v", s, err)
	}
	return got
}

// Retention describes how a log drops what its snapshots cover.
type Retention struct {
	// Expire makes the log's retention window pass for every record
	// written so far and runs its retention; nil when the test cannot
	// (the suite then checks that nothing the contract keeps is lost).
	Expire func(t *testing.T, l persistence.Log)
	// KeepsUncovered is true for a log that never drops a record no
	// snapshot covers (the embedded log), false for one that drops by age
	// alone (Kafka).
	KeepsUncovered bool
}

// RunRetention checks the contract of retention: after the window, a
// stream replayed after its snapshot is whole, replayed from the start it
// is an unbroken suffix, and later appends take higher offsets.
func RunRetention(t *testing.T, open func(t *testing.T) persistence.Log, r Retention) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := open(t)
	defer l.Close()
	s := fmt.Sprintf("room-retention-%d", time.Now().UnixNano())
	quiet := s + "-quiet"
	rec := func(i int) string { return fmt.Sprintf("%s-%04d-%s", s, i, strings.Repeat("r", 40)) }
	mustAppend(t, ctx, l, quiet, "q0", "q1", "q2")
	var offs []int64
	for i := 0; i < 200; i += 10 {
		var batch []string
		for k := i; k < i+10; k++ {
			batch = append(batch, rec(k))
		}
		offs = append(offs, mustAppend(t, ctx, l, s, batch...)...)
	}
	snapAt := offs[149]
	if err := l.SaveSnapshot(ctx, s, persistence.Snapshot{Offset: snapAt, Data: []byte("state at 149")}); err != nil {
		t.Fatal(err)
	}
	if r.Expire != nil {
		r.Expire(t, l)
	}
	tail := replayAll(t, ctx, l, s, snapAt)
	if len(tail) != 50 {
		t.Fatalf("after the snapshot: got %d records, want 50", len(tail))
	}
	for i, got := range tail {
		if string(got.Data) != rec(150+i) || got.Offset != offs[150+i] {
			t.Fatalf("after the snapshot, record %d: got %q at %d, want %q at %d", i, got.Data, got.Offset, rec(150+i), offs[150+i])
		}
	}
	all := replayAll(t, ctx, l, s, -1)
	if len(all) < 50 {
		t.Fatalf("from the start: got %d records, want at least the 50 after the snapshot", len(all))
	}
	first := len(offs) - len(all)
	for i, got := range all {
		if string(got.Data) != rec(first+i) || got.Offset != offs[first+i] {
			t.Fatalf("from the start, record %d: got %q, want %q: not an unbroken suffix", i, got.Data, rec(first+i))
		}
	}
	if r.KeepsUncovered {
		if got := replayAll(t, ctx, l, quiet, -1); len(got) != 3 {
			t.Fatalf("a stream without a snapshot: got %d records, want all 3", len(got))
		}
	}
	more := mustAppend(t, ctx, l, s, "after")
	if more[0] <= offs[len(offs)-1] {
		t.Fatalf("offset after retention %d, not above %d", more[0], offs[len(offs)-1])
	}
	snap, ok, err := l.LoadSnapshot(ctx, s)
	if err != nil || !ok || snap.Offset != snapAt {
		t.Fatalf("snapshot after retention: %+v %v %v", snap, ok, err)
	}
}

// Parallel calls do(w, i) for i from 0 to each-1 in each of writers
// goroutines at once, a writer stopping at its first error, and fails t
// with the errors once all are done.
func Parallel(t testing.TB, writers, each int, do func(w, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := do(w, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
