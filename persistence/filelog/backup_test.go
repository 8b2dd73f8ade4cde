package filelog

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A backup taken while appends go on holds every record acknowledged before
// it began, each stream as an unbroken prefix, and opens.
func TestBackupUnderLoad(t *testing.T) {
	dir, to := t.TempDir(), t.TempDir()+"/image"
	clock := newFakeClock()
	l, err := OpenOptions(dir, Options{SegmentSize: 8 << 10, Retention: time.Hour, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l)
	streams := []string{"a", "b", "c"}
	var acked [3]atomic.Int64
	write := func(i, from, to int) {
		for k := from; k < to; k++ {
			if _, err := l.Append(context.Background(), streams[i], record(streams[i], k)); err != nil {
				t.Error(err)
				return
			}
			acked[i].Store(int64(k + 1))
		}
	}
	for i := range streams {
		write(i, 0, 200)
	}
	snapshotAt(t, l, "a", 150)
	clock.Add(2 * time.Hour)
	if _, err := l.Retain(); err != nil {
		t.Fatal(err)
	}
	before := [3]int64{acked[0].Load(), acked[1].Load(), acked[2].Load()}
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func(i int) { defer wg.Done(); write(i, 200, 1200) }(i)
	}
	n, err := Backup(dir, to)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n == 0 {
		t.Fatal("nothing copied")
	}
	img := mustOpen(t, to, defaultSegmentSize)
	defer mustClose(t, img)
	for i, s := range streams {
		from := int64(-1)
		if s == "a" {
			from = 150
		}
		got := replayOffsets(t, img, s, from)
		if int64(len(got)) < before[i]-from-1 {
			t.Fatalf("%s: the image holds %d records after %d, want at least the %d acknowledged before the backup", s, len(got), from, before[i])
		}
		for k, off := range got {
			if off != from+1+int64(k) {
				t.Fatalf("%s: a hole at %d", s, off)
			}
		}
	}
	if _, err := Backup(dir, to); err == nil {
		t.Fatal("a backup into a directory that is not empty")
	}
}
