package filelog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// BenchmarkAppend measures durable appends of 100-byte records: one caller
// waits a whole fsync per record; 64 callers share them (group commit).
func BenchmarkAppend(b *testing.B) {
	data := bytes.Repeat([]byte("e"), 100)
	for _, tc := range []struct {
		name    string
		callers int
		rooms   int
	}{
		{"callers=1", 1, 1},
		{"callers=64/rooms=64", 64, 64},
		{"callers=64/rooms=1", 64, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l := mustOpen(b, b.TempDir(), defaultSegmentSize)
			defer mustClose(b, l)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			if tc.callers == 1 {
				for b.Loop() {
					if _, err := l.Append(ctx, "room-0", data); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				var next atomic.Int64
				b.SetParallelism((tc.callers + 1) / 2)
				b.RunParallel(func(pb *testing.PB) {
					stream := fmt.Sprintf("room-%d", next.Add(1)%int64(tc.rooms))
					for pb.Next() {
						if _, err := l.Append(ctx, stream, data); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(b.N)/float64(max(1, l.syncs.Load())), "records/fsync")
		})
	}
}

// writeFixture writes a log of n 64-byte events to each stream, perFrame
// events to a frame, streams taking turns frame by frame, as Append would
// have written it.
func writeFixture(b *testing.B, dir string, streams []string, n, perFrame int) {
	b.Helper()
	ev := bytes.Repeat([]byte("v"), 64)
	seg := uint32(1)
	buf := []byte(segmentMagic)
	flush := func() {
		// Synced, so that write-back does not run under the measurement.
		f, err := os.OpenFile(segmentPath(dir, seg), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		seg++
		buf = append(buf[:0], segmentMagic...)
	}
	data := make([][]byte, perFrame)
	for i := range data {
		data[i] = ev
	}
	for first := 0; first < n; first += perFrame {
		for _, s := range streams {
			size := frameSize(s, data)
			if int64(len(buf)+size) > defaultSegmentSize {
				flush()
			}
			buf = appendFrame(buf, size, s, int64(first), data)
		}
	}
	flush()
}

// BenchmarkReplay replays a stream of a million small events from the
// start, as a room's first activation without a snapshot does.
func BenchmarkReplay(b *testing.B) {
	const events = 1_000_000
	for _, tc := range []struct {
		name     string
		streams  []string
		perFrame int
	}{
		{"events=1e6/perAppend=1", []string{"room-a"}, 1},
		{"events=1e6/perAppend=100", []string{"room-a"}, 100},
		// Another room's million events interleaved frame by frame: none of
		// them is read, but the room's frames are no longer adjacent.
		{"events=1e6/perAppend=1/interleaved", []string{"room-a", "room-b"}, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			writeFixture(b, dir, tc.streams, events, tc.perFrame)
			l := mustOpen(b, dir, defaultSegmentSize)
			defer mustClose(b, l)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n := 0
				if _, err := l.Replay(ctx, "room-a", -1, func(r persistence.Record) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
				if n != events {
					b.Fatalf("replayed %d events, want %d", n, events)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/replay")
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkOpen measures Open of a log of a million single-event appends:
// the scan that rebuilds the index and checks every frame.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	writeFixture(b, dir, []string{"room-a"}, 1_000_000, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l := mustOpen(b, dir, defaultSegmentSize)
		mustClose(b, l)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/open")
}

// BenchmarkReplayTail measures what a grain does after each of its
// writes: replay the stream after the offset it had, which reads back the
// one frame just appended.
func BenchmarkReplayTail(b *testing.B) {
	dir := b.TempDir()
	writeFixture(b, dir, []string{"room-a"}, 10_000, 1)
	l := mustOpen(b, dir, defaultSegmentSize)
	defer mustClose(b, l)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := l.Replay(ctx, "room-a", 10_000-2, func(persistence.Record) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 1 {
			b.Fatalf("replayed %d events, want 1", n)
		}
	}
}
