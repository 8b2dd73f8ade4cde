package grain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

// faultSeason is a small season of real rooms in the embedded log, written
// through the rooms' own rules as BenchmarkSeason does: room 0 and room 2
// busy and snapshotting, room 1 quiet and never snapshotted, then two hours
// on a fake clock and a retention pass (which drops the busy rooms' early
// records), then more of the busy rooms, and last one record of a stream
// "tail" for the torn-tail fault.
type faultSeason struct {
	dir string
	ids [3]string
}

const (
	faultSegment  = 8 << 10
	faultSnapEach = 48 // events between snapshots of a busy room
)

func makeFaultSeason(t *testing.T) faultSeason {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	var simNS atomic.Int64
	clock := func() time.Time { return start.Add(time.Duration(simNS.Load())) }
	l, err := filelog.OpenOptions(dir, filelog.Options{SegmentSize: faultSegment, Retention: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	deps := Deps{Log: l, Sealer: sealer, Hash: hash, Now: clock, Logger: quietLogger(), WriteTimeout: 30 * time.Second}
	var s faultSeason
	s.dir = dir
	var states [3]*room.State
	since := [3]int{}
	for i := range states {
		states[i] = seasonRoom(t, &deps, i)
		s.ids[i] = states[i].ID
	}
	for round := 0; round < 60; round++ {
		for _, i := range []int{0, 2} {
			seasonAppend(t, l, states[i], &since[i], true)
		}
		if round%10 == 0 {
			seasonAppend(t, l, states[1], &since[1], false)
		}
	}
	simNS.Add(int64(2 * time.Hour))
	if _, err := l.Retain(); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 50; round++ {
		for _, i := range []int{0, 2} {
			seasonAppend(t, l, states[i], &since[i], true)
		}
	}
	if _, err := l.Append(context.Background(), "tail", []byte("the last record written")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// seasonAppend appends four events of the hot path (reservations and
// checkpoints) to st's stream, and a snapshot every faultSnapEach events
// when snap is set.
func seasonAppend(t *testing.T, l persistence.Log, st *room.State, since *int, snap bool) {
	t.Helper()
	now := time.Now().UnixNano()
	var evs []room.Event
	for e := 0; e < 4; e++ {
		if e%2 == 0 {
			evs = append(evs, st.DecideReserve(st.Reserved+200, now)...)
		} else {
			st.Issued = st.Reserved
			evs = append(evs, st.DecideCheckpoint(now, false)...)
		}
	}
	data := make([][]byte, len(evs))
	for i, e := range evs {
		b, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		data[i] = b
	}
	offs, err := l.Append(context.Background(), st.ID, data...)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		st.Apply(offs[i], e)
	}
	if *since += len(evs); snap && *since >= faultSnapEach {
		*since = 0
		b, _ := json.Marshal(st)
		if err := l.SaveSnapshot(context.Background(), st.ID, persistence.Snapshot{Offset: offs[len(offs)-1], Data: b}); err != nil {
			t.Fatal(err)
		}
	}
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// activateRoom activates room id on l as its grain does and says what it
// recovered: the room's numbers, or why it failed.
func activateRoom(l persistence.Log, id string) (digest string, failed error) {
	deps := Deps{Log: l, Sealer: sealer, Hash: hash, Now: time.Now, Logger: quietLogger(), WriteTimeout: 10 * time.Second}
	g := newRoomGrain(&deps).(*roomGrain)
	g.id, g.log = id, deps.Logger
	g.activate()
	if !g.ready {
		return "", g.failed
	}
	st := g.st
	return fmt.Sprintf("exists=%v slug=%s issued=%d reserved=%d checkpointed=%d audit=%d",
		st.Exists, st.Config.Slug, st.Issued, st.Reserved, st.Checkpointed, len(st.Audit)), nil
}

// copyTree copies the log directory src to a new one.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		if fi.Name() == "LOCK" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil || len(segs) < 4 {
		t.Fatalf("segments %v (%v): want a few", segs, err)
	}
	sort.Strings(segs)
	return segs
}

// firstFrameOf returns the segment and position of the stream name inside
// the first frame of the stream that the log keeps.
func firstFrameOf(t *testing.T, dir, stream string) (string, int) {
	t.Helper()
	for _, p := range segmentFiles(t, dir) {
		b, _ := os.ReadFile(p)
		if i := bytes.Index(b, []byte(stream)); i >= 0 {
			return p, i
		}
	}
	t.Fatalf("no frame of %s", stream)
	return "", 0
}

// snapshotOf returns the file of the stream's newest (or previous)
// snapshot, found by the stream name it holds.
func snapshotOf(t *testing.T, dir, stream string, previous bool) string {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	for _, e := range entries {
		p := filepath.Join(dir, "snapshots", e.Name())
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(stream)) && strings.HasPrefix(e.Name(), "p-") == previous {
			return p
		}
	}
	t.Fatalf("no snapshot of %s (previous %v)", stream, previous)
	return ""
}

func flipAt(t *testing.T, path string, pos int, bit byte) {
	t.Helper()
	if err := faultfs.FlipBit(path, pos, bit); err != nil {
		t.Fatal(err)
	}
}

// faultRow is one fault of the table and what it must come to.
type faultRow struct {
	name   string
	inject func(t *testing.T, dir string, s faultSeason, fsys *faultfs.FS)
	// open is what Open's error must say; empty: the log opens.
	open string
	// rooms is each room's outcome once the log opens (after a repair
	// where Open refuses): "exact" (the same numbers as without the
	// fault), or what its activation error must say; refused is then the
	// code its grain answers: room_unavailable for damage, which no retry
	// mends, unavailable for a failing disk.
	rooms   [3]string
	refused string
	// verify is what log verify must say, and whether it finds damage.
	verify  string
	damaged bool
	// heal, with the fault removed, reopens the log: every room exact.
	heal bool
}

const exact = "exact"

var faultTable = []faultRow{{
	name: "bit flip in a sealed segment",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		p, i := firstFrameOf(t, dir, s.ids[1])
		flipAt(t, p, i+len(s.ids[1])+1, 0x04) // the frame's first offset
	},
	open:    "frame checksum mismatch",
	rooms:   [3]string{exact, "its first record kept is 1 and no intact snapshot covers the ones before", exact},
	refused: protocol.CodeRoomUnavailable,
	// The stream name in the damaged frame is read and named.
	verify: "hold no whole frame (frame checksum mismatch) (the damaged frame names stream", damaged: true,
}, {
	// The index is not stored: Open rebuilds it from the frames' headers,
	// so its damage is a flipped length.
	name: "bit flip in a frame's length, what the index is rebuilt from",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		p, i := firstFrameOf(t, dir, s.ids[1])
		flipAt(t, p, i-2-8+3, 0x10) // top byte of the length
	},
	open:    "frame length out of range",
	rooms:   [3]string{exact, "its first record kept is 1 and no intact snapshot covers the ones before", exact},
	refused: protocol.CodeRoomUnavailable,
	verify:  "hold no whole frame (frame length out of range)", damaged: true,
}, {
	name: "bit flip in the newest snapshot",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		flipAt(t, snapshotOf(t, dir, s.ids[0], false), -1, 0x01)
	},
	rooms:  [3]string{exact, exact, exact},
	verify: "recovers from its previous snapshot", damaged: true,
}, {
	name: "bit flip in both snapshots",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		flipAt(t, snapshotOf(t, dir, s.ids[0], false), -1, 0x01)
		flipAt(t, snapshotOf(t, dir, s.ids[0], true), -1, 0x01)
	},
	rooms:   [3]string{"no intact snapshot covers the ones before", exact, exact},
	refused: protocol.CodeRoomUnavailable,
	verify:  "cannot be recovered", damaged: true,
}, {
	name: "zero-length newest snapshot",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		if err := os.Truncate(snapshotOf(t, dir, s.ids[2], false), 0); err != nil {
			t.Fatal(err)
		}
	},
	rooms:  [3]string{exact, exact, exact},
	verify: "snapshot empty file", damaged: true,
}, {
	name: "truncated tail",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		segs := segmentFiles(t, dir)
		last := segs[len(segs)-1]
		fi, _ := os.Stat(last)
		if err := os.Truncate(last, fi.Size()-3); err != nil {
			t.Fatal(err)
		}
	},
	rooms:  [3]string{exact, exact, exact},
	verify: "torn tail",
}, {
	name: "missing middle segment",
	inject: func(t *testing.T, dir string, s faultSeason, _ *faultfs.FS) {
		segs := segmentFiles(t, dir)
		if err := os.Remove(segs[len(segs)-2]); err != nil {
			t.Fatal(err)
		}
	},
	open:    "missing",
	rooms:   [3]string{"follows offset", exact, "follows offset"},
	refused: protocol.CodeRoomUnavailable,
	verify:  "segment missing", damaged: true,
}, {
	name: "EIO on read",
	inject: func(t *testing.T, dir string, s faultSeason, fsys *faultfs.FS) {
		fsys.FailRead.Store(true)
	},
	rooms:   [3]string{"input/output error", "input/output error", "input/output error"},
	refused: protocol.CodeUnavailable,
	verify:  "input/output error",
	heal:    true,
}, {
	name: "ENOSPC on write",
	inject: func(t *testing.T, dir string, s faultSeason, fsys *faultfs.FS) {
		fsys.FailWrite.Store(true)
	},
	rooms:   [3]string{"no space left on device", "event log unavailable", "event log unavailable"},
	refused: protocol.CodeUnavailable,
	verify:  "torn tail",
	heal:    true,
}}

// TestFaultTable injects each fault into a copy of a season's log and
// checks its written outcome through opening the log (and activating each
// room as its grain does) and through log verify; where Open refuses the
// log, through log repair and the repaired log.
func TestFaultTable(t *testing.T) {
	s := makeFaultSeason(t)
	want := faultBaseline(t, s)
	for _, row := range faultTable {
		t.Run(row.name, func(t *testing.T) {
			dir := copyTree(t, s.dir)
			fsys := &faultfs.FS{}
			row.inject(t, dir, s, fsys)
			if !row.heal {
				checkVerify(t, dir, fsys, row) // before Open cuts a torn tail
			}
			l, err := filelog.OpenOptions(dir, filelog.Options{FS: fsys})
			if row.open != "" {
				if err == nil || !strings.Contains(err.Error(), row.open) {
					t.Fatalf("open: %v, want an error saying %q", err, row.open)
				}
				out := filepath.Join(t.TempDir(), "repaired")
				if _, err := filelog.Repair(dir, out); err != nil {
					t.Fatalf("repair: %v", err)
				}
				if l, err = filelog.Open(out); err != nil {
					t.Fatalf("open the repaired log: %v", err)
				}
			} else if err != nil {
				t.Fatalf("open: %v", err)
			}
			checkRooms(t, l, s, row.rooms, row.refused, want)
			closeErr := l.Close()
			if !row.heal {
				return
			}
			checkVerify(t, dir, fsys, row) // what the failing disk left
			if fsys.FailWrite.Load() && closeErr == nil {
				t.Fatal("close after a failed write: no error")
			}
			fsys.FailRead.Store(false)
			fsys.FailWrite.Store(false)
			l, err = filelog.OpenOptions(dir, filelog.Options{FS: fsys})
			if err != nil {
				t.Fatalf("reopen with the disk well: %v", err)
			}
			defer l.Close()
			checkRooms(t, l, s, [3]string{exact, exact, exact}, "", want)
		})
	}
}

// faultBaseline is what each room recovers from a copy of the season
// without a fault.
func faultBaseline(t *testing.T, s faultSeason) map[string]string {
	t.Helper()
	l, err := filelog.Open(copyTree(t, s.dir))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := map[string]string{}
	for _, id := range s.ids {
		d, err := activateRoom(l, id)
		if err != nil {
			t.Fatalf("room %s without a fault: %v", id, err)
		}
		want[id] = d
	}
	return want
}

// checkRooms activates each room and checks its outcome, and the code a
// refused room answers.
func checkRooms(t *testing.T, l persistence.Log, s faultSeason, outcomes [3]string, refused string, want map[string]string) {
	t.Helper()
	for i, id := range s.ids {
		d, err := activateRoom(l, id)
		switch {
		case outcomes[i] == exact && (err != nil || d != want[id]):
			t.Errorf("room %d: got %q (%v), want it recovered exactly: %q", i, d, err, want[id])
		case outcomes[i] != exact && (err == nil || !strings.Contains(err.Error(), outcomes[i])):
			t.Errorf("room %d: got %q (%v), want it refused saying %q", i, d, err, outcomes[i])
		case outcomes[i] != exact && notActivated(err).Code != refused:
			t.Errorf("room %d: %v is answered %s, want %s", i, err, notActivated(err).Code, refused)
		}
	}
}

// checkVerify runs log verify on dir and checks what it says.
func checkVerify(t *testing.T, dir string, fsys *faultfs.FS, row faultRow) {
	t.Helper()
	v, err := filelog.VerifyWith(dir, fsys)
	if err != nil {
		if !strings.Contains(err.Error(), row.verify) {
			t.Fatalf("verify: %v, want it to say %q", err, row.verify)
		}
		return
	}
	var all []string
	for _, f := range v.Findings {
		all = append(all, fmt.Sprintf("%v %s: %s", f.Damage, f.Where, f.What))
	}
	text := strings.Join(all, "\n")
	t.Logf("verify: %d segments, %d frames, %d snapshots, %d streams:\n%s", v.Segments, v.Frames, v.Snapshots, v.Streams, text)
	if !strings.Contains(text, row.verify) || v.Damaged() != row.damaged {
		t.Fatalf("verify found (damaged %v):\n%s\nwant %q, damaged %v", v.Damaged(), text, row.verify, row.damaged)
	}
}
