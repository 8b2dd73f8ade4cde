package filelog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// tornLog writes 20 records to streams a and b, b's last, and returns the
// directory, the last segment's path and where b's last frame starts.
func tornLog(t *testing.T) (dir, seg string, lastFrame int64) {
	t.Helper()
	dir = t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	for i := 0; i < 20; i++ {
		appendRecords(t, l, "a", i, i+1)
		appendRecords(t, l, "b", i, i+1)
	}
	fr, _ := l.streams["b"].idx.viewLocked().lookup(19, nil)
	mustClose(t, l)
	return dir, segmentPath(dir, fr.seg), int64(fr.pos)
}

func TestTornTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, b []byte, last int64) []byte
		keepB  int // records of b that survive
	}{
		{"Intact", func(t *testing.T, b []byte, last int64) []byte { return b }, 20},
		{"CutMidRecord", func(t *testing.T, b []byte, last int64) []byte { return b[:len(b)-5] }, 19},
		{"CutInFrameHeader", func(t *testing.T, b []byte, last int64) []byte { return b[:last+3] }, 19},
		{"CutAfterFrameHeader", func(t *testing.T, b []byte, last int64) []byte { return b[:last+frameHeader] }, 19},
		{"GarbageAppended", func(t *testing.T, b []byte, last int64) []byte {
			return append(b, []byte("\x17\xff\x03garbage that is not a frame at all, and then some more bytes")...)
		}, 20},
		{"PlausibleHeaderAppended", func(t *testing.T, b []byte, last int64) []byte {
			// A length that fits the file and a checksum that does not match.
			g := binary.LittleEndian.AppendUint32(nil, 20)
			g = append(g, 1, 2, 3, 4)
			return append(append(b, g...), make([]byte, 20)...)
		}, 20},
		{"ZerosAppended", func(t *testing.T, b []byte, last int64) []byte { return append(b, make([]byte, 8192)...) }, 20},
		{"ByteFlippedInLastRecord", func(t *testing.T, b []byte, last int64) []byte {
			b[len(b)-2] ^= 0x40
			return b
		}, 19},
		{"LengthFlippedInLastRecord", func(t *testing.T, b []byte, last int64) []byte {
			b[last+1] ^= 0x01
			return b
		}, 19},
		{"ChecksumFlippedInLastRecord", func(t *testing.T, b []byte, last int64) []byte {
			b[last+5] ^= 0x80
			return b
		}, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, seg, last := tornLog(t)
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(seg, tc.damage(t, b, last), 0o600); err != nil {
				t.Fatal(err)
			}

			l := mustOpen(t, dir, defaultSegmentSize)
			checkStream(t, l, "a", 20)
			checkStream(t, l, "b", tc.keepB)
			wantSize := last
			if tc.keepB == 20 {
				wantSize = int64(len(b))
			}
			if st, err := os.Stat(seg); err != nil || st.Size() != wantSize {
				t.Fatalf("segment after open: %v bytes (%v), want cut to %d", st.Size(), err, wantSize)
			}
			// Appends continue right after the last good record.
			appendRecords(t, l, "b", tc.keepB, tc.keepB+5)
			appendRecords(t, l, "a", 20, 25)
			checkStream(t, l, "b", tc.keepB+5)
			mustClose(t, l)

			l = mustOpen(t, dir, defaultSegmentSize)
			defer mustClose(t, l)
			checkStream(t, l, "a", 25)
			checkStream(t, l, "b", tc.keepB+5)
		})
	}
}

// A multi-record append is one frame: a torn tail takes all of it or none.
func TestTornBatchIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, defaultSegmentSize)
	appendRecords(t, l, "r", 0, 3)
	if _, err := l.Append(context.Background(), "r", record("r", 3), record("r", 4), record("r", 5)); err != nil {
		t.Fatal(err)
	}
	seg := segmentPath(dir, l.activeSeg)
	mustClose(t, l)
	b, _ := os.ReadFile(seg)
	// Cut inside the batch's last record: the first two are whole on disk
	// but must not come back without the third.
	if err := os.WriteFile(seg, b[:len(b)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, defaultSegmentSize)
	defer mustClose(t, l)
	checkStream(t, l, "r", 3)
}

func TestDamageBeforeTheTailIsAnError(t *testing.T) {
	ctx := context.Background()
	build := func(t *testing.T) string {
		dir := t.TempDir()
		l := mustOpen(t, dir, 300)
		appendRecords(t, l, "r", 0, 60)
		mustClose(t, l)
		if segs, _ := segmentNumbers(dir); len(segs) < 3 {
			t.Fatalf("got %d segments, want 3 or more", len(segs))
		}
		return dir
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"ByteFlippedInSealedSegment", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(segmentPath(dir, 1))
			b[len(b)/2] ^= 1
			os.WriteFile(segmentPath(dir, 1), b, 0o600)
		}},
		{"SealedSegmentCut", func(t *testing.T, dir string) {
			os.Truncate(segmentPath(dir, 2), 100)
		}},
		{"SegmentMissing", func(t *testing.T, dir string) {
			os.Remove(segmentPath(dir, 2))
		}},
		{"SealedSegmentHeaderDamaged", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(segmentPath(dir, 1))
			b[0] = 'X'
			os.WriteFile(segmentPath(dir, 1), b, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := build(t)
			tc.damage(t, dir)
			l, err := open(dir, 300, osFS{}, time.Now)
			if err == nil {
				l.Close()
				t.Fatal("open succeeded")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}

	t.Run("DamageAfterOpenFailsReplay", func(t *testing.T) {
		dir := build(t)
		l := mustOpen(t, dir, 300)
		defer mustClose(t, l)
		b, _ := os.ReadFile(segmentPath(dir, 1))
		b[len(b)-2] ^= 1
		os.WriteFile(segmentPath(dir, 1), b, 0o600)
		var n int
		_, err := l.Replay(ctx, "r", -1, func(persistence.Record) error { n++; return nil })
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v, want ErrCorrupt", err)
		}
		if n >= 60 {
			t.Fatalf("delivered %d records, want the replay stopped before the damaged one", n)
		}
	})
}

// A crash while a segment was being created can leave it empty or with half
// a header.
func TestTornSegmentHeader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []byte
	}{
		{"Empty", nil},
		{"HalfHeader", []byte(segmentMagic[:3])},
		{"Zeros", make([]byte, 4096)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, defaultSegmentSize)
			appendRecords(t, l, "r", 0, 5)
			mustClose(t, l)
			if err := os.WriteFile(segmentPath(dir, 2), tc.header, 0o600); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, dir, defaultSegmentSize)
			appendRecords(t, l, "r", 5, 10)
			mustClose(t, l)
			l = mustOpen(t, dir, defaultSegmentSize)
			defer mustClose(t, l)
			checkStream(t, l, "r", 10)
			b, _ := os.ReadFile(segmentPath(dir, 2))
			if !bytes.HasPrefix(b, []byte(segmentMagic)) || len(b) <= int(headerSize) {
				t.Fatalf("segment 2 holds %d bytes, want a header and the new records", len(b))
			}
		})
	}
}

// FuzzOpen feeds arbitrary bytes as the last segment: Open never panics,
// and in whatever it accepts each stream either replays without error and
// takes new appends, or is one Open found damaged (a frame past a gap no
// snapshot covers): listed by Damaged, refusing reads and writes with
// ErrDamaged, while a new stream is still written.
func FuzzOpen(f *testing.F) {
	var valid []byte
	valid = append(valid, segmentMagic...)
	for i, s := range []string{"a", "b", "a"} {
		d := [][]byte{record(s, i)}
		first := int64(0)
		if i == 2 {
			first = 1
		}
		valid = appendFrame(valid, frameSize(s, d), s, first, d)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-4])
	f.Add(append(bytes.Clone(valid), 0xff, 0xff, 0xff, 0x7f))
	f.Add([]byte(segmentMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(segmentPath(dir, 1), b, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := open(dir, 1<<12, osFS{}, time.Now)
		if err != nil {
			return
		}
		defer l.Close()
		damaged := l.Damaged()
		for name := range l.streams {
			checkAccepted(t, l, name, damaged[name] != "")
		}
		checkAccepted(t, l, "a", damaged["a"] != "")
		if _, err := l.Append(context.Background(), "fresh", []byte("new")); err != nil {
			t.Fatalf("append of a new stream to an accepted log: %v", err)
		}
	})
}

// checkAccepted checks one stream of a log Open accepted: a damaged one
// refuses to be read or written with ErrDamaged, any other replays and
// takes an append.
func checkAccepted(t *testing.T, l *Log, name string, damaged bool) {
	t.Helper()
	ctx := context.Background()
	_, rerr := l.Replay(ctx, name, -1, func(persistence.Record) error { return nil })
	_, aerr := l.Append(ctx, name, []byte("new"))
	if damaged {
		if !errors.Is(rerr, persistence.ErrDamaged) || !errors.Is(aerr, persistence.ErrDamaged) {
			t.Fatalf("stream %q, found damaged at Open: replay %v, append %v; want ErrDamaged from both", name, rerr, aerr)
		}
		return
	}
	if rerr != nil || aerr != nil {
		t.Fatalf("stream %q of an accepted log: replay %v, append %v", name, rerr, aerr)
	}
}
