package capacity

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

func (r *room) adjust(t *testing.T, a Adjust) {
	t.Helper()
	evs, err := r.t.DecideAdjust(a, "admin", r.now)
	if err != nil {
		t.Fatal(err)
	}
	r.apply(evs)
}

func ptr[T any](v T) *T { return &v }

// Raising active at runtime lets the line in at once; the file's settings
// sent again by every proxy do not undo it; the change survives the log
// and a snapshot, and Differs names it.
func TestAdjustActiveOverFile(t *testing.T) {
	r := newRoom(1, "a", "b", "c")
	if r.t.Status("b").Admitted {
		t.Fatal("b inside with active 1")
	}
	r.adjust(t, Adjust{Version: 0, Active: ptr(3)})
	if r.t.Settings.Active != 3 || r.t.File.Active != 1 || r.t.Runtime.Version != 1 {
		t.Fatalf("settings %+v file %+v runtime %+v", r.t.Settings, r.t.File, r.t.Runtime)
	}
	file := Settings{Active: 1, Session: 60 * time.Second, Refresh: 10 * time.Second}
	if evs := r.t.Configure(file, "", "", r.now); len(evs) != 0 {
		t.Fatalf("the file's settings again: %v, want no event", evs)
	}
	r.now += sec
	if !r.check("b").Admitted || !r.check("c").Admitted {
		t.Fatal("line not let in after active went to 3")
	}
	if got := r.t.Differs(); !slices.Equal(got, []string{"active"}) {
		t.Fatalf("differs %v", got)
	}
	got := r.restored(t)
	if got.Settings.Active != 3 || got.File.Active != 1 || got.Runtime.Version != 1 || len(got.Audit) != 1 || got.Audit[0].Actor != "admin" {
		t.Fatalf("restored: settings %+v file %+v runtime %+v audit %+v", got.Settings, got.File, got.Runtime, got.Audit)
	}
	// A new file (a reload raising active to 2) keeps the runtime's 3.
	file.Active = 2
	r.apply(r.t.Configure(file, "shop", "/", r.now))
	if r.t.Settings.Active != 3 || r.t.File.Active != 2 || r.t.Host != "shop" {
		t.Fatalf("after a new file: %+v %+v %q", r.t.Settings, r.t.File, r.t.Host)
	}
	r.adjust(t, Adjust{Version: 1, Reset: []string{"active"}})
	if r.t.Settings.Active != 2 || len(r.t.Differs()) != 0 {
		t.Fatalf("after reset: %+v differs %v", r.t.Settings, r.t.Differs())
	}
}

// Paused lets nobody new in (holders stay), open lets everyone in.
func TestAdjustPauseAndOpen(t *testing.T) {
	r := newRoom(2, "a")
	r.adjust(t, Adjust{Paused: ptr(true)})
	if r.check("b").Admitted || !r.check("a").Admitted {
		t.Fatal("paused: b let in or a dropped")
	}
	r.apply(r.t.Arrive("p", r.now))
	if r.t.Status("p").Admitted {
		t.Fatal("paused: a first request went in")
	}
	r.adjust(t, Adjust{Version: 1, Paused: ptr(false), Open: ptr(true)})
	for _, id := range []string{"b", "c", "d", "e"} {
		r.now += sec
		r.check(id)
		if !r.check(id).Admitted {
			t.Fatalf("open: %s not let in", id)
		}
	}
	if n := len(r.t.Inside); n != 5 {
		t.Fatalf("open: %d inside, want 5", n)
	}
	r.adjust(t, Adjust{Version: 2, Open: ptr(false)})
	if r.check("f").Admitted {
		t.Fatal("closed again: f let in with 5 inside of 2")
	}
}

// Bad changes are refused with the field named; a stale version, a flood
// of changes and a change that changes nothing are told apart.
func TestAdjustRefused(t *testing.T) {
	r := newRoom(2)
	for _, c := range []struct {
		a     Adjust
		field string
	}{
		{Adjust{Active: ptr(0)}, "active"},
		{Adjust{Active: ptr(MaxActive + 1)}, "active"},
		{Adjust{Pow: &PowAuto{PerMinute: 10, Bits: 99}}, "pow"},
		{Adjust{AddressBudget: &rate.AddressBudget{PerMinute: 0, Burst: 5}}, "addressBudget"},
		{Adjust{Paused: ptr(true), Open: ptr(true)}, "open"},
		{Adjust{Reset: []string{"session"}}, "reset"},
	} {
		_, err := r.t.DecideAdjust(c.a, "admin", r.now)
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Field != c.field {
			t.Fatalf("%+v: %v, want invalid %s", c.a, err, c.field)
		}
	}
	if r.t.Runtime.Version != 0 {
		t.Fatal("a refused change was applied")
	}
	if evs, err := r.t.DecideAdjust(Adjust{}, "admin", r.now); err != nil || len(evs) != 0 {
		t.Fatalf("no change: %v %v", evs, err)
	}
	r.adjust(t, Adjust{Active: ptr(5)})
	if _, err := r.t.DecideAdjust(Adjust{Version: 0, Active: ptr(6)}, "admin", r.now); !errors.Is(err, ErrStale) {
		t.Fatalf("stale version: %v", err)
	}
	for i := 1; i < MaxAdjustments; i++ {
		r.adjust(t, Adjust{Version: int64(i), Active: ptr(6 + i%2)})
	}
	if _, err := r.t.DecideAdjust(Adjust{Version: MaxAdjustments, Active: ptr(9)}, "admin", r.now); !errors.Is(err, ErrTooManyAdjustments) {
		t.Fatalf("change %d within a minute: %v", MaxAdjustments+1, err)
	}
	r.now += AdjustWindow
	if _, err := r.t.DecideAdjust(Adjust{Version: MaxAdjustments, Active: ptr(9)}, "admin", r.now); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
	if len(r.t.Audit) > maxAudit {
		t.Fatalf("audit holds %d entries", len(r.t.Audit))
	}
}

// A snapshot written before runtime settings existed restores with the
// file's settings as they were in force.
func TestSnapshotBeforeRuntime(t *testing.T) {
	old := `{"epoch":3,"settings":{"active":7,"session":60000000000,"refresh":10000000000},"inside":{},"line":[]}`
	tb := New()
	if err := json.Unmarshal([]byte(old), tb); err != nil {
		t.Fatal(err)
	}
	if tb.File.Active != 7 || tb.Settings.Active != 7 || tb.Runtime.Version != 0 {
		t.Fatalf("%+v %+v", tb.File, tb.Runtime)
	}
	if evs := tb.Configure(tb.File, "", "", 1); len(evs) != 0 {
		t.Fatal("the same file reconfigures a restored room")
	}
}

// Figures count the last minute's admissions and expiries and the
// provisional places of the last window; the node reports are bounded and
// drop out when silent.
func TestFiguresAndNodes(t *testing.T) {
	r := newRoom(2, "a", "b", "c")
	r.t.Provisional(r.now)
	f := r.t.Figures(r.now)
	if f.Inside != 2 || f.Waiting != 1 || f.AdmittedPerMinute != 2 || f.Provisional != 1 {
		t.Fatalf("%+v", f)
	}
	r.now += 61 * sec
	r.apply(r.t.Expire(r.now))
	f = r.t.Figures(r.now)
	if f.ExpiredPerMinute != 2 || f.AdmittedPerMinute != 0 || f.Provisional != 0 {
		t.Fatalf("a minute later: %+v", f)
	}
	var n Nodes
	for i := range MaxNodes + 5 {
		n.Report(NodeReport{Node: string(rune('a'+i%26)) + string(rune('0'+i/26))}, 0)
	}
	if got := len(n.List(0)); got != MaxNodes {
		t.Fatalf("%d nodes kept, want %d", got, MaxNodes)
	}
	if !n.Report(NodeReport{Node: "a0", Refusals: 3}, NodeTTL) || len(n.List(NodeTTL+1)) != 1 {
		t.Fatalf("silent nodes not dropped: %d", len(n.List(NodeTTL+1)))
	}
}

// Proof of work turned on at runtime in a room whose file has none works
// as the file's would, and the file sent again does not turn it off; the
// reason of the last change is kept for the console.
func TestAdjustPowAtRuntime(t *testing.T) {
	r := newRoom(1, "in")
	p := &PowCounter{}
	r.flood(p, 200, 10*time.Second)
	if r.t.PowBits() != 0 {
		t.Fatal("proof of work without pow_auto")
	}
	r.adjust(t, Adjust{Pow: &PowAuto{PerMinute: 60, Bits: 4}})
	r.apply(r.t.Configure(r.t.File, "", "", r.now))
	r.flood(p, 200, 10*time.Second)
	if r.t.PowBits() < 4 || r.t.Figures(r.now).PowReason == "" {
		t.Fatalf("bits %d reason %q after a flood with pow_auto set at runtime", r.t.PowBits(), r.t.Figures(r.now).PowReason)
	}
	if !slices.Equal(r.t.Differs(), []string{"pow"}) {
		t.Fatalf("differs %v", r.t.Differs())
	}
}

// Offer: proxies of one room with different files. The first file's
// settings are taken whatever their age; after that only a file modified
// later replaces them, so two nodes offering theirs in turn write nothing
// more; a file of unknown age (a visitor's check) never replaces one. The
// time of the file held survives the log and a snapshot, so a restart or
// a restore from a backup does not start the turns again: a file newer
// than the backup's wins once.
func TestOfferNewestFileWinsOnce(t *testing.T) {
	r := &room{t: New(), now: 1_000 * sec}
	a := Settings{Active: 3, Session: time.Minute, Refresh: 10 * time.Second}
	b := a
	b.Active = 5
	r.apply(r.t.Offer(a, "shop", "/", 100, r.now))
	if r.t.File != a || r.t.FileAt != 100 || r.t.Host != "shop" {
		t.Fatalf("first offer: file %+v at %d host %q", r.t.File, r.t.FileAt, r.t.Host)
	}
	r.apply(r.t.Offer(b, "shop", "/", 200, r.now))
	if r.t.File != b || r.t.FileAt != 200 || r.t.Settings.Active != 5 {
		t.Fatalf("newer file: file %+v at %d", r.t.File, r.t.FileAt)
	}
	for range 5 {
		for _, o := range []struct {
			s  Settings
			at int64
		}{{a, 100}, {b, 200}, {a, 0}, {a, 200}} {
			if evs := r.t.Offer(o.s, "shop", "/", o.at, r.now); len(evs) != 0 {
				t.Fatalf("offer of active %d at %d: %v, want none", o.s.Active, o.at, evs)
			}
		}
	}
	if !r.t.FileDiffers(a) || r.t.FileDiffers(b) {
		t.Fatal("FileDiffers does not tell the older file")
	}
	// The host is recorded whatever the file.
	tb := New()
	tb.Apply(0, tb.Offer(b, "", "", 200, r.now)[0])
	if evs := tb.Offer(a, "shop", "/", 100, r.now); len(evs) != 1 || *evs[0].Settings != b || evs[0].FileAt != 200 || evs[0].Host != "shop" {
		t.Fatalf("an older file naming the room: %+v", evs)
	}
	// A file dated in the future counts as modified now: a file edited
	// later still wins.
	fut := New()
	fut.Apply(0, fut.Offer(b, "", "", r.now+1e12, r.now)[0])
	if fut.FileAt != r.now || len(fut.Offer(a, "", "", r.now+1, r.now+2)) != 1 {
		t.Fatalf("a future file: held at %d, a later file not taken", fut.FileAt)
	}
	// A restart or a restore (the log replayed, then its snapshot read)
	// keeps the time.
	got := r.restored(t)
	if got.FileAt != 200 || got.Offer(a, "shop", "/", 100, r.now) != nil {
		t.Fatalf("restored: file at %d, an older file written again", got.FileAt)
	}
	if evs := got.Offer(a, "shop", "/", 300, r.now); len(evs) != 1 || evs[0].FileAt != 300 {
		t.Fatalf("restored: a file newer than the backup's: %v", evs)
	}
}
