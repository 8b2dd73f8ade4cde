package filelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/logtest"
)

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		segLimit int64
	}{
		{"DefaultSegments", defaultSegmentSize},
		// Segments of a few frames: every test also crosses segment ends.
		{"TinySegments", 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logtest.Run(t,
				func(t *testing.T) persistence.Log { return mustOpen(t, t.TempDir(), tc.segLimit) },
				func(t *testing.T, l persistence.Log) persistence.Log {
					dir := l.(*Log).dir
					if err := l.Close(); err != nil {
						t.Fatalf("close: %v", err)
					}
					return mustOpen(t, dir, tc.segLimit)
				})
		})
	}
}

func TestRetentionConformance(t *testing.T) {
	clock := newFakeClock()
	logtest.RunRetention(t, func(t *testing.T) persistence.Log {
		l, err := OpenOptions(t.TempDir(), Options{SegmentSize: 1 << 10, Retention: time.Hour, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}, logtest.Retention{KeepsUncovered: true, Expire: func(t *testing.T, l persistence.Log) {
		fl := l.(*Log)
		before, _ := fl.DiskBytes()
		clock.Add(2 * time.Hour)
		if _, err := fl.Retain(); err != nil {
			t.Fatal(err)
		}
		if after, _ := fl.DiskBytes(); after >= before {
			t.Fatalf("retention dropped nothing: %d bytes before, %d after", before, after)
		}
	}})
}

func mustOpen(t testing.TB, dir string, segLimit int64) *Log {
	t.Helper()
	l, err := open(dir, segLimit, osFS{}, time.Now)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

func mustClose(t testing.TB, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// record is the payload of record i of a stream in these tests.
func record(stream string, i int) []byte {
	return []byte(fmt.Sprintf("%s/%d/%s", stream, i, strings.Repeat("x", i%7)))
}

// checkStream replays the stream and fails the test unless it holds exactly
// records 0 to want-1 of record(stream, i), in order.
func checkStream(t testing.TB, l *Log, stream string, want int) {
	t.Helper()
	n := 0
	last, err := l.Replay(context.Background(), stream, -1, func(r persistence.Record) error {
		if r.Offset != int64(n) {
			return fmt.Errorf("record %d has offset %d", n, r.Offset)
		}
		if !bytes.Equal(r.Data, record(stream, n)) {
			return fmt.Errorf("record %d: got %q, want %q", n, r.Data, record(stream, n))
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatalf("replay %s: %v", stream, err)
	}
	if n != want || last != int64(want-1) {
		t.Fatalf("replay %s: got %d records ending at %d, want %d", stream, n, last, want)
	}
}

func appendRecords(t testing.TB, l *Log, stream string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		offs, err := l.Append(context.Background(), stream, record(stream, i))
		if err != nil {
			t.Fatalf("append %s %d: %v", stream, i, err)
		}
		if offs[0] != int64(i) {
			t.Fatalf("append %s %d: got offset %d, want %d", stream, i, offs[0], i)
		}
	}
}

func TestInterleavedStreamsAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, 512)
	streams := []string{"directory", "Room-9f3KzQ", "room/../../etc"}
	for i := 0; i < 200; i++ {
		for _, s := range streams[:1+i%len(streams)] {
			n := l.streams[s]
			next := 0
			if n != nil {
				next = int(n.next)
			}
			appendRecords(t, l, s, next, next+1)
		}
	}
	want := map[string]int{}
	for _, s := range streams {
		want[s] = int(l.streams[s].next)
		checkStream(t, l, s, want[s])
	}
	mustClose(t, l)
	if segs, _ := segmentNumbers(dir); len(segs) < 10 {
		t.Fatalf("got %d segments, want many at 512 bytes each", len(segs))
	}

	l = mustOpen(t, dir, 512)
	defer mustClose(t, l)
	for _, s := range streams {
		checkStream(t, l, s, want[s])
		// Incremental read back from every offset.
		for after := int64(-1); after < int64(want[s]); after += 7 {
			var got []int64
			last, err := l.Replay(context.Background(), s, after, func(r persistence.Record) error {
				got = append(got, r.Offset)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != want[s]-int(after)-1 || (len(got) > 0 && got[0] != after+1) || last != max(after, int64(want[s]-1)) {
				t.Fatalf("%s after %d: got %d records from %v, last %d", s, after, len(got), got[:min(1, len(got))], last)
			}
		}
	}
}

func TestBatchIsOneFrame(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	defer mustClose(t, l)
	offs, err := l.Append(context.Background(), "r", []byte("a"), []byte(""), []byte("c"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(offs) != "[0 1 2]" {
		t.Fatalf("got offsets %v, want [0 1 2]", offs)
	}
	if n := l.streams["r"].idx.frameCount(); n != 1 {
		t.Fatalf("got %d frames, want 1", n)
	}
	var got []string
	if _, err := l.Replay(context.Background(), "r", 0, func(r persistence.Record) error {
		got = append(got, string(r.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[ c]" {
		t.Fatalf("got %q, want the empty record and c", got)
	}
}

func TestReplayDataMayBeKept(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	defer mustClose(t, l)
	appendRecords(t, l, "r", 0, 50)
	var kept [][]byte
	if _, err := l.Replay(context.Background(), "r", -1, func(r persistence.Record) error {
		kept = append(kept, r.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Appending to a kept record must not overwrite its neighbour.
	_ = append(kept[0], "clobber"...)
	for i, d := range kept {
		if !bytes.Equal(d, record("r", i)) {
			t.Fatalf("kept record %d: got %q, want %q", i, d, record("r", i))
		}
	}
}

func TestReplayStopsAtCallbackError(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	defer mustClose(t, l)
	appendRecords(t, l, "r", 0, 10)
	stop := errors.New("stop")
	last, err := l.Replay(context.Background(), "r", -1, func(r persistence.Record) error {
		if r.Offset == 4 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || last != 3 {
		t.Fatalf("got last %d err %v, want 3 and the callback's error", last, err)
	}
}

func TestGroupCommitSharesFsyncs(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	defer mustClose(t, l)
	const writers, each = 64, 20
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := fmt.Sprintf("room-%d", w%8)
			for i := 0; i < each; i++ {
				if _, err := l.Append(context.Background(), s, []byte("e")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if syncs := l.syncs.Load(); syncs >= writers*each/2 {
		t.Fatalf("%d appends took %d fsyncs, want them shared", writers*each, syncs)
	}
	t.Logf("%d appends, %d fsyncs", writers*each, l.syncs.Load())
}

func TestAppendRules(t *testing.T) {
	l := mustOpen(t, t.TempDir(), defaultSegmentSize)
	ctx := context.Background()
	if _, err := l.Append(ctx, "", []byte("x")); err == nil {
		t.Fatal("empty stream name accepted")
	}
	if _, err := l.Append(ctx, "r", make([]byte, maxFrame)); err == nil {
		t.Fatal("oversized append accepted")
	}
	if offs, err := l.Append(ctx, "r"); err != nil || len(offs) != 0 {
		t.Fatalf("empty append: got %v %v, want no offsets", offs, err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Append(done, "r", []byte("x")); !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a cancelled context: got %v", err)
	}
	// A big append (several MiB) is one frame and replays whole.
	big := bytes.Repeat([]byte("b"), 5<<20)
	if _, err := l.Append(ctx, "r", big, big[:10]); err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := l.Replay(ctx, "r", -1, func(r persistence.Record) error { n += len(r.Data); return nil }); err != nil || n != len(big)+10 {
		t.Fatalf("replay of big records: %d bytes, %v", n, err)
	}
	mustClose(t, l)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Append", func() error { _, err := l.Append(ctx, "r", []byte("x")); return err }},
		{"EmptyAppend", func() error { _, err := l.Append(ctx, "r"); return err }},
		{"Replay", func() error {
			_, err := l.Replay(ctx, "r", -1, func(persistence.Record) error { return nil })
			return err
		}},
		{"SaveSnapshot", func() error { return l.SaveSnapshot(ctx, "r", persistence.Snapshot{}) }},
		{"LoadSnapshot", func() error { _, _, err := l.LoadSnapshot(ctx, "r"); return err }},
		{"Close", l.Close},
	} {
		if err := tc.call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: got %v, want ErrClosed", tc.name, err)
		}
	}
}

func TestCloseFlushesPendingAppends(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	var wg sync.WaitGroup
	acked := make([]bool, 32)
	for i := range acked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Append(context.Background(), fmt.Sprintf("r%d", i), record("x", i)); err == nil {
				acked[i] = true
			}
		}()
	}
	// Close races with the appends: each one either fails with ErrClosed or
	// is durable.
	mustClose(t, l)
	wg.Wait()
	l = mustOpen(t, dir, defaultSegmentSize)
	defer mustClose(t, l)
	for i, ok := range acked {
		n := 0
		if _, err := l.Replay(context.Background(), fmt.Sprintf("r%d", i), -1, func(persistence.Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if ok && n != 1 {
			t.Fatalf("acknowledged append %d lost in Close", i)
		}
	}
}

func TestDirectoryIsLocked(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	if l2, err := Open(dir); err == nil {
		l2.Close()
		t.Fatal("second Open of a directory in use succeeded")
	}
	mustClose(t, l)
	mustClose(t, mustOpen(t, dir, defaultSegmentSize))
}

func TestSnapshotFileNames(t *testing.T) {
	for _, tc := range []struct{ stream, want string }{
		{"directory", "s-directory.snap"},
		{"room-7f3a", "s-room-7f3a.snap"},
		{"Room", "s-_52oom.snap"},
		{"room", "s-room.snap"},
		{"../../etc/passwd", "s-_2e_2e_2f_2e_2e_2fetc_2fpasswd.snap"},
		{"a_b", "s-a_5fb.snap"},
		{strings.Repeat("é", 40), "h-" + "x"},
	} {
		t.Run(tc.stream, func(t *testing.T) {
			got := snapshotFile(tc.stream)
			if strings.HasPrefix(tc.want, "h-") {
				if !strings.HasPrefix(got, "h-") || len(got) != len("h-")+64+len(snapshotExt) {
					t.Fatalf("got %q, want a hashed name", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// Names are one-to-one on a case-insensitive file system too.
	seen := map[string]string{}
	for _, s := range []string{"a", "A", "_41", "a_", "a-", "h-x", "-", "", "a/b", "a\x00b"} {
		f := strings.ToLower(snapshotFile(s))
		if other, ok := seen[f]; ok {
			t.Fatalf("%q and %q share snapshot file %s", s, other, f)
		}
		seen[f] = s
	}
}

func TestSnapshots(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	ctx := context.Background()
	streams := []string{"Room-A", "room-a", "directory", strings.Repeat("long-", 60)}
	for i, s := range streams {
		if err := l.SaveSnapshot(ctx, s, persistence.Snapshot{Offset: int64(i), Data: []byte(s)}); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, l)
	// A crash between writing and renaming leaves a temporary file.
	if err := os.WriteFile(filepath.Join(dir, snapshotDir, tempPrefix+"123"+snapshotExt), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, defaultSegmentSize)
	defer mustClose(t, l)
	for i, s := range streams {
		snap, ok, err := l.LoadSnapshot(ctx, s)
		if err != nil || !ok || snap.Offset != int64(i) || string(snap.Data) != s {
			t.Fatalf("%s: got %+v %v %v", s, snap, ok, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, snapshotDir))
	if len(entries) != len(streams) {
		t.Fatalf("got %d files in snapshots/, want %d (temporary file removed)", len(entries), len(streams))
	}

	// A snapshot file moved to another stream's name is not taken for it,
	// nor is that stream rebuilt empty: a file in its name says it had
	// records.
	if err := os.Rename(filepath.Join(dir, snapshotDir, snapshotFile("room-a")), filepath.Join(dir, snapshotDir, snapshotFile("room-b"))); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.LoadSnapshot(ctx, "room-b"); ok || !errors.Is(err, persistence.ErrDamaged) ||
		!strings.Contains(err.Error(), `belongs to stream "room-a"`) {
		t.Fatalf("moved snapshot: ok %v err %v, want ErrDamaged naming the owner", ok, err)
	}
}

// Readers follow writers the way a grain reads its stream back after each
// write: incrementally, from the last offset it has seen.
func TestReplayWhileAppending(t *testing.T) {
	l := mustOpen(t, t.TempDir(), 4096)
	defer mustClose(t, l)
	ctx := context.Background()
	const writers, each = 4, 100
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := l.Append(ctx, "r", []byte(fmt.Sprintf("w%d-%d", w, i)), []byte("pair")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last := int64(-1)
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		got, err := l.Replay(ctx, "r", last, func(r persistence.Record) error {
			if r.Offset != last+1 {
				return fmt.Errorf("got offset %d after %d", r.Offset, last)
			}
			if r.Offset%2 == 1 && string(r.Data) != "pair" {
				return fmt.Errorf("offset %d: got %q, want the second record of a pair", r.Offset, r.Data)
			}
			last = r.Offset
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != last {
			t.Fatalf("replay returned %d, delivered up to %d", got, last)
		}
	}
	if last != 2*writers*each-1 {
		t.Fatalf("read up to %d, want %d", last, 2*writers*each-1)
	}
}

// After a failed write the log refuses appends rather than guess where the
// file stands; a reopen cuts whatever the failure left and goes on.
func TestWriteFailureIsSticky(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	ctx := context.Background()
	appendRecords(t, l, "r", 0, 3)
	l.active.Close() // the next write fails as a failing disk's would
	for i := 0; i < 2; i++ {
		if _, err := l.Append(ctx, "r", []byte("lost")); !errors.Is(err, persistence.ErrUnavailable) {
			t.Fatalf("append %d after a write failure: got %v, want ErrUnavailable", i, err)
		}
	}
	if err := l.Close(); err == nil {
		t.Fatal("Close after a write failure reported nothing")
	}
	l = mustOpen(t, dir, defaultSegmentSize)
	defer mustClose(t, l)
	checkStream(t, l, "r", 3)
	appendRecords(t, l, "r", 3, 5)
	checkStream(t, l, "r", 5)
}
