package filelog

import (
	"testing"
	"time"
)

// Inspect reads a log that another Log holds open and says what retention
// would drop, without changing a byte.
func TestInspectBesideTheWriter(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l, err := OpenOptions(dir, Options{SegmentSize: 2 << 10, Retention: time.Hour, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l)
	appendRecords(t, l, "big", 0, 300)
	snapshotAt(t, l, "big", 249)
	appendRecords(t, l, "small", 0, 5)
	before, _ := l.DiskBytes()

	in, err := Inspect(dir, time.Hour, time.Now().Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Segments) < 5 || len(in.Streams) != 2 || in.Streams[0].Name != "big" {
		t.Fatalf("inspection: %+v", in)
	}
	big := in.Streams[0]
	if big.First != 0 || big.Next != 300 || big.Snapshot != 249 || big.Frames != 300 || in.IndexBytes == 0 {
		t.Fatalf("big: %+v", big)
	}
	if in.Streams[1].Snapshot != -1 || in.Plan.Freed == 0 || len(in.Plan.Rewritten) == 0 {
		t.Fatalf("small %+v, plan %+v: want a plan that frees what big's snapshot covers", in.Streams[1], in.Plan)
	}
	if after, _ := l.DiskBytes(); after != before {
		t.Fatalf("inspect changed the log: %d bytes, %d before", after, before)
	}
	appendRecords(t, l, "big", 300, 301) // the writer goes on
	if _, err := Inspect(t.TempDir(), time.Hour, time.Now()); err == nil {
		t.Fatal("inspect of an empty directory succeeded")
	}
}
