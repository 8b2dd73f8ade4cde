package filelog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

// flipByte flips one bit of the file's byte at pos (from the end when
// negative).
func flipByte(t testing.TB, path string, pos int) {
	t.Helper()
	if err := faultfs.FlipBit(path, pos, 0x10); err != nil {
		t.Fatal(err)
	}
}

// retainedBusy writes 2,000 records of "busy" with a snapshot every 100
// (the last ten stay uncovered) and three of "other", and lets retention
// drop what it may.
func retainedBusy(t *testing.T, dir string) {
	t.Helper()
	clock := newFakeClock()
	l := openClocked(t, dir, 4<<10, clock)
	appendRecords(t, l, "other", 0, 3)
	for i := 0; i < 2000; i += 100 {
		appendRecords(t, l, "busy", i, i+100)
		snapshotAt(t, l, "busy", int64(i+89))
	}
	clock.Add(2 * time.Hour)
	if _, err := l.Retain(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

// A damaged newest snapshot gives way to the previous generation and the
// records after it, which retention kept; with both damaged the stream is
// refused alone, by name, at Open and after, and never read from its tail.
func TestSnapshotGenerations(t *testing.T) {
	dir := t.TempDir()
	retainedBusy(t, dir)
	ctx := context.Background()
	newest := filepath.Join(dir, snapshotDir, snapshotFile("busy"))
	flipByte(t, newest, -1)

	l := mustOpen(t, dir, 4<<10)
	snap, ok, err := l.LoadSnapshot(ctx, "busy")
	if err != nil || !ok || snap.Offset != 1889 {
		t.Fatalf("newest damaged: got %d %v %v, want the previous snapshot at 1889", snap.Offset, ok, err)
	}
	if got := replayOffsets(t, l, "busy", snap.Offset); len(got) != 110 || got[0] != 1890 || got[109] != 1999 {
		t.Fatalf("after the previous snapshot: got %d records from %v, want 1890..1999", len(got), got[:1])
	}
	mustClose(t, l)

	flipByte(t, filepath.Join(dir, snapshotDir, prevPrefix+snapshotFile("busy")), -1)
	l = mustOpen(t, dir, 4<<10)
	defer mustClose(t, l)
	why := l.Damaged()["busy"]
	if len(l.Damaged()) != 1 || !strings.Contains(why, "no intact snapshot covers the ones before") {
		t.Fatalf("damaged streams %v, want busy alone with the reason", l.Damaged())
	}
	if _, _, err := l.LoadSnapshot(ctx, "busy"); !errors.Is(err, persistence.ErrDamaged) {
		t.Fatalf("load snapshot of a damaged stream: %v, want ErrDamaged", err)
	}
	if _, err := l.Replay(ctx, "busy", -1, func(persistence.Record) error { return nil }); !errors.Is(err, persistence.ErrDamaged) {
		t.Fatalf("replay of a damaged stream: %v, want ErrDamaged", err)
	}
	if _, err := l.Append(ctx, "busy", []byte("x")); !errors.Is(err, persistence.ErrDamaged) {
		t.Fatalf("append to a damaged stream: %v, want ErrDamaged", err)
	}
	if got := replayOffsets(t, l, "other", -1); len(got) != 3 {
		t.Fatalf("the other stream: got %v", got)
	}
	appendRecords(t, l, "other", 3, 4)
	if st := l.Stats(); st.Damaged != 1 {
		t.Fatalf("stats %+v, want one damaged stream", st)
	}
	in, err := Inspect(dir, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, si := range in.Streams {
		if (si.Name == "busy") != (si.Damaged != "") {
			t.Fatalf("inspect: %s damaged %q", si.Name, si.Damaged)
		}
	}
	// A backup is checked whole: the damage is found now, not at restore.
	if _, err := Backup(dir, filepath.Join(t.TempDir(), "b")); err == nil || !strings.Contains(err.Error(), `stream "busy" is damaged`) {
		t.Fatalf("backup of a log with a damaged stream: %v, want the damage named", err)
	}
}

// A save keeps the previous generation, and a damaged newest one is not
// rotated over it.
func TestSnapshotRotation(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	defer func() { mustClose(t, l) }()
	ctx := context.Background()
	appendRecords(t, l, "s", 0, 30)
	snapshotAt(t, l, "s", 9)
	snapshotAt(t, l, "s", 19)
	prev := filepath.Join(dir, snapshotDir, prevPrefix+snapshotFile("s"))
	b, _ := os.ReadFile(prev)
	if _, snap, err := decodeSnapshotFile(b); err != nil || snap.Offset != 9 {
		t.Fatalf("previous generation: %d %v, want offset 9", snap.Offset, err)
	}
	// The newest is damaged after it was written: the next save replaces
	// it and leaves the intact previous one. Reopen to read the disk.
	mustClose(t, l)
	flipByte(t, filepath.Join(dir, snapshotDir, snapshotFile("s")), -1)
	l = mustOpen(t, dir, defaultSegmentSize)
	snapshotAt(t, l, "s", 29)
	b, _ = os.ReadFile(prev)
	if _, snap, err := decodeSnapshotFile(b); err != nil || snap.Offset != 9 {
		t.Fatalf("previous generation after a save over a damaged newest: %d %v, want offset 9", snap.Offset, err)
	}
	if snap, ok, err := l.LoadSnapshot(ctx, "s"); err != nil || !ok || snap.Offset != 29 {
		t.Fatalf("newest: %d %v %v", snap.Offset, ok, err)
	}
}

// A damaged snapshot of a stream whose records are all in the log is no
// snapshot; of one whose records the log does not hold, it is damage.
func TestDamagedSnapshotAlone(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	defer mustClose(t, l)
	ctx := context.Background()
	snapshotAt(t, l, "directory", 2)
	appendRecords(t, l, "whole", 0, 3)
	snapshotAt(t, l, "whole", 2)
	flip := func(stream string) { flipByte(t, filepath.Join(dir, snapshotDir, snapshotFile(stream)), -1) }
	flip("whole")
	if _, ok, err := l.LoadSnapshot(ctx, "whole"); ok || err != nil {
		t.Fatalf("damaged snapshot: ok %v err %v, want none", ok, err)
	}
	// One whose records 0..2 the log does not hold (here: never did) cannot
	// be rebuilt: it is damaged, not empty.
	flip("directory")
	if _, ok, err := l.LoadSnapshot(ctx, "directory"); ok || !errors.Is(err, persistence.ErrDamaged) ||
		!strings.Contains(err.Error(), "newest snapshot checksum mismatch; previous snapshot missing") ||
		!strings.Contains(err.Error(), "the log holds none of its records") {
		t.Fatalf("damaged snapshot, records gone: ok %v err %v, want ErrDamaged with the reason", ok, err)
	}
	// Found so, the stream is refused from then on and counted.
	if _, err := l.Append(ctx, "directory", []byte("x")); !errors.Is(err, persistence.ErrDamaged) || l.Damaged()["directory"] == "" {
		t.Fatalf("append to a stream found damaged: %v (damaged %v)", err, l.Damaged())
	}
}
