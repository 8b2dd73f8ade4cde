package filelog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// fakeClock is a clock tests step by hand.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// openClocked opens the log in dir with segments of segment bytes and an
// hour's retention on clock.
func openClocked(t testing.TB, dir string, segment int64, clock *fakeClock) *Log {
	t.Helper()
	l, err := OpenOptions(dir, Options{SegmentSize: segment, Retention: time.Hour, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
func replayOffsets(t testing.TB, l *Log, s string, after int64) []int64 {
	t.Helper()
	var got []int64
	if _, err := l.Replay(context.Background(), s, after, func(r persistence.Record) error {
		if string(r.Data) != string(record(s, int(r.Offset))) {
			return fmt.Errorf("record %d of %s: got %q", r.Offset, s, r.Data)
		}
		got = append(got, r.Offset)
		return nil
	}); err != nil {
		t.Fatalf("replay %s: %v", s, err)
	}
	return got
}

func snapshotAt(t testing.TB, l *Log, s string, off int64) {
	t.Helper()
	if err := l.SaveSnapshot(context.Background(), s, persistence.Snapshot{Offset: off, Data: []byte("state")}); err != nil {
		t.Fatal(err)
	}
}

// Retention drops what both snapshot generations cover once older than the
// window, keeps
// what they do not (a quiet stream pins only its own frames, rewritten into
// a small segment), and streams go on at the right offset after a reopen.
func TestRetentionAfterSnapshots(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	opts := Options{SegmentSize: 4 << 10, Retention: time.Hour, Now: clock.Now}
	l, err := OpenOptions(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, "quiet", 0, 3) // never snapshotted
	appendRecords(t, l, "done", 0, 50)
	snapshotAt(t, l, "done", 49) // covers all of it
	for i := 0; i < 2000; i += 100 {
		appendRecords(t, l, "busy", i, i+100)
		snapshotAt(t, l, "busy", int64(i+89)) // the last ten stay uncovered
	}
	before, _ := l.DiskBytes()
	if r, _ := l.Retain(); len(r.Rewritten)+len(r.Removed) != 0 {
		t.Fatalf("retention inside the window: %+v", r)
	}
	clock.Add(2 * time.Hour)
	plan := l.Plan()
	r, err := l.Retain()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := l.DiskBytes()
	t.Logf("disk %d -> %d bytes; rewritten %v, removed %v, pinned %v", before, after, r.Rewritten, r.Removed, r.Pinned)
	if fmt.Sprint(plan.Rewritten) != fmt.Sprint(r.Rewritten) {
		t.Fatalf("plan said %v, the pass rewrote %v", plan.Rewritten, r.Rewritten)
	}
	// busy keeps what came after its previous snapshot (1889), which
	// stands in should the newest one be damaged.
	if after > before/4 || r.Pinned["quiet"] != 1 || r.Pinned["done"] != 0 || r.Pinned["busy"] != 1 || len(r.Pinned) != 2 {
		t.Fatalf("disk %d -> %d, report %+v: want most of it gone, one segment pinned by quiet, one by busy", before, after, r)
	}
	check := func(l *Log) {
		t.Helper()
		if got := replayOffsets(t, l, "quiet", -1); fmt.Sprint(got) != "[0 1 2]" {
			t.Fatalf("quiet: got %v, want every record", got)
		}
		if got := replayOffsets(t, l, "busy", 1989); len(got) != 10 || got[0] != 1990 {
			t.Fatalf("busy after its snapshot: got %v, want 1990..1999", got)
		}
		all := replayOffsets(t, l, "busy", -1)
		if len(all) >= 2000 || all[len(all)-1] != 1999 {
			t.Fatalf("busy from the start: %d records ending %d, want a suffix ending at 1999", len(all), all[len(all)-1])
		}
		for i := 1; i < len(all); i++ {
			if all[i] != all[i-1]+1 {
				t.Fatalf("busy: a hole between %d and %d", all[i-1], all[i])
			}
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = OpenOptions(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l)
	check(l)
	// Streams go on after their last offset, even one with nothing left.
	appendRecords(t, l, "done", 50, 51)
	appendRecords(t, l, "busy", 2000, 2001)
	appendRecords(t, l, "quiet", 3, 4)
}

// A snapshot older than the stored one is not kept: what lies between may
// be gone already.
func TestOlderSnapshotIsIgnored(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	defer mustClose(t, l)
	snapshotAt(t, l, "s", 20)
	snapshotAt(t, l, "s", 10)
	snap, ok, err := l.LoadSnapshot(context.Background(), "s")
	if err != nil || !ok || snap.Offset != 20 {
		t.Fatalf("got %+v %v %v, want the snapshot at 20", snap, ok, err)
	}
}

// Replays running while retention rewrites segments read what they would
// have read without it (run with -race).
func TestRetentionWhileReplaying(t *testing.T) {
	clock := newFakeClock()
	l := openClocked(t, t.TempDir(), 2<<10, clock)
	defer mustClose(t, l)
	appendRecords(t, l, "pin", 0, 1)
	for i := 0; i < 600; i += 50 {
		appendRecords(t, l, "a", i, i+50)
		snapshotAt(t, l, "a", int64(i+39))
	}
	clock.Add(2 * time.Hour)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if got := replayOffsets(t, l, "a", 589); len(got) < 10 || got[0] != 590 || got[len(got)-1] != 589+int64(len(got)) {
					t.Errorf("tail: got %v", got)
					return
				}
				replayOffsets(t, l, "pin", -1)
			}
		}()
	}
	for i := 0; i < 5; i++ {
		if _, err := l.Retain(); err != nil {
			t.Error(err)
		}
		appendRecords(t, l, "a", 600+i, 601+i)
		snapshotAt(t, l, "a", 589)
	}
	close(stop)
	wg.Wait()
}

// Retention removes the segments at the front once nothing is left in them.
func TestRetentionRemovesEmptySegments(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l := openClocked(t, dir, 2<<10, clock)
	defer mustClose(t, l)
	appendRecords(t, l, "a", 0, 300)
	snapshotAt(t, l, "a", 299)
	segs, _ := segmentNumbers(dir)
	clock.Add(2 * time.Hour)
	r, err := l.Retain()
	if err != nil {
		t.Fatal(err)
	}
	left, _ := segmentNumbers(dir)
	if len(r.Removed) != len(segs)-1 || len(left) != 1 || left[0] != segs[len(segs)-1] {
		t.Fatalf("segments %v, removed %v, left %v: want all but the last removed", segs, r.Removed, left)
	}
	// The last segment, still open, keeps its frames.
	if got := replayOffsets(t, l, "a", -1); len(got) == 0 || len(got) > 100 || got[len(got)-1] != 299 {
		t.Fatalf("got %v, want the last segment's records only", got)
	}
	appendRecords(t, l, "a", 300, 301)
}
