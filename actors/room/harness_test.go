package room_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Times are Unix nanoseconds on a fake clock that starts at t0.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano()

const (
	ms     = int64(time.Millisecond)
	second = int64(time.Second)
	minute = int64(time.Minute)
	hour   = int64(time.Hour)
)

func at(d int64) int64 { return t0 + d }

func timeAt(d int64) *time.Time {
	t := time.Unix(0, at(d)).UTC()
	return &t
}

// baseConfig is a valid, running room at 600 numbers a minute.
func baseConfig() room.Config {
	return room.Config{Slug: "sale", Name: "Winter sale", RatePerMinute: 600, Active: true}
}

// memLog is the room's log: the record at index i stands at offset i.
type memLog struct {
	recs [][]byte
	// snap is the latest snapshot and the offset it covers (-1: none).
	snap    []byte
	snapOff int64
	// durable is the line a recovery would start from: the last line
	// written by the activation in force, or the snapshot's.
	durable room.Line
}

func newMemLog() *memLog { return &memLog{snapOff: -1} }

func (l *memLog) append(b []byte) int64 {
	l.recs = append(l.recs, b)
	return int64(len(l.recs) - 1)
}

var errSuperseded = errors.New("superseded")

// grain is the smallest shell around the state machine that behaves like
// the room grain: it appends what the Decide… methods return, reads the log
// back from the last verified offset and applies what it reads, stopping at
// a newer activation's marker (fencing); it hands out numbers from reserved
// blocks; and it recovers by snapshot plus replay, then marks its own
// activation.
type grain struct {
	tb       testing.TB
	id       string
	log      *memLog
	st       *room.State
	epoch    int64
	verified int64
	block    uint64
}

// activate recovers room id from log and appends a new activation marker.
func activate(tb testing.TB, log *memLog, id string, now int64, block uint64) *grain {
	tb.Helper()
	g := &grain{tb: tb, id: id, log: log, st: room.New(id), verified: -1, block: block}
	if log.snap != nil {
		if err := json.Unmarshal(log.snap, g.st); err != nil {
			tb.Fatalf("restore snapshot: %v", err)
		}
		g.verified = log.snapOff
	}
	marker := room.Event{Type: room.TypeActivated, At: now, Activated: &room.Activated{Nonce: fmt.Sprintf("n%d", len(log.recs))}}
	b, err := marker.Encode()
	if err != nil {
		tb.Fatalf("encode marker: %v", err)
	}
	g.epoch = log.append(b)
	for off := g.verified + 1; off < int64(len(log.recs)); off++ {
		g.st.Apply(off, decode(tb, log.recs[off]))
	}
	g.verified = int64(len(log.recs)) - 1
	g.st.Recovered()
	if g.st.Epoch != g.epoch {
		tb.Fatalf("epoch after activation: got %d, want %d", g.st.Epoch, g.epoch)
	}
	return g
}

// newRoom creates a room in a fresh log at now.
func newRoom(tb testing.TB, cfg room.Config, now int64, block uint64) *grain {
	tb.Helper()
	g := activate(tb, newMemLog(), "r1", now, block)
	evs, err := g.st.DecideCreate(cfg, []byte("sealed-secret"), []byte("sealed-ticket-key"), now, "admin", testDrawKey)
	if err != nil {
		tb.Fatalf("create: %v", err)
	}
	g.must(evs)
	return g
}

func decode(tb testing.TB, b []byte) room.Event {
	tb.Helper()
	e, err := room.DecodeEvent(b)
	if err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return e
}

// commit appends evs and applies the log read back from the last verified
// offset. It fails with errSuperseded, applying nothing further, when a newer
// activation's marker stands in what it reads.
// armedRoom is a room of baseConfig created at 0 to open at opensAt,
// joined by as many visitors a minute in; its configuration is returned
// for the test to move the opening.
func armedRoom(tb testing.TB, opensAt int64, joined int) (*grain, room.Config) {
	tb.Helper()
	cfg := baseConfig()
	cfg.OpensAt = timeAt(opensAt)
	g := newRoom(tb, cfg, at(0), 1000)
	for range joined {
		g.mustJoin(at(minute))
	}
	return g, cfg
}

func (g *grain) commit(evs []room.Event) error {
	for i := range evs {
		b, err := evs[i].Encode()
		if err != nil {
			g.tb.Fatalf("encode %s: %v", evs[i].Type, err)
		}
		g.log.append(b)
	}
	for off := g.verified + 1; off < int64(len(g.log.recs)); off++ {
		e := decode(g.tb, g.log.recs[off])
		if e.Type == room.TypeActivated && off > g.epoch {
			return errSuperseded
		}
		g.st.Apply(off, e)
		if e.Line != nil && e.Epoch == g.st.Epoch {
			g.log.durable = *e.Line
		}
		g.verified = off
	}
	return nil
}

func (g *grain) must(evs []room.Event) {
	g.tb.Helper()
	if err := g.commit(evs); err != nil {
		g.tb.Fatalf("commit: %v", err)
	}
}

// join hands out the next number, reserving a block when the last one is
// used up.
func (g *grain) join(now int64) (uint64, error) {
	n, err := g.st.Join(now)
	if err != room.ErrNeedBlock {
		return n, err
	}
	if err := g.reserve(now); err != nil {
		return 0, err
	}
	return g.st.Join(now)
}

func (g *grain) reserve(now int64) error {
	base := max(g.st.Reserved, g.st.Issued)
	return g.commit(g.st.DecideReserve(base+g.block, now))
}

func (g *grain) mustJoin(now int64) uint64 {
	g.tb.Helper()
	n, err := g.join(now)
	if err != nil {
		g.tb.Fatalf("join at %v: %v", time.Duration(now-t0), err)
	}
	return n
}

func (g *grain) configure(cfg room.Config, now int64) {
	g.tb.Helper()
	evs, err := g.st.DecideConfigure(cfg, now, "admin", testDrawKey)
	if err != nil {
		g.tb.Fatalf("configure: %v", err)
	}
	g.must(evs)
}

// snapshot stores the state as it stands, covering the log up to verified.
func (g *grain) snapshot() {
	b, err := json.Marshal(g.st)
	if err != nil {
		g.tb.Fatalf("snapshot: %v", err)
	}
	g.log.snap, g.log.snapOff, g.log.durable = b, g.verified, g.st.Line
}

// crash drops g and recovers the room in a new activation at now.
func (g *grain) crash(now int64) *grain {
	return activate(g.tb, g.log, g.id, now, g.block)
}

// testDrawKey arms the draws of the tests; its sealed form is a stand-in
// (the rules never open it).
var testDrawKey = room.DrawKey{Key: []byte("0123456789abcdef0123456789abcdef"), Sealed: []byte("sealed-draw-key")}

// open makes the committed draw when it is due, with testDrawKey and no
// beacon; nil when none is due.
func (g *grain) open(now int64) []room.Event {
	g.tb.Helper()
	evs, err := g.st.DecideDraw(now, room.DrawInput{Key: testDrawKey.Key})
	if err != nil {
		g.tb.Fatalf("draw at %v: %v", time.Duration(now-t0), err)
	}
	return evs
}
