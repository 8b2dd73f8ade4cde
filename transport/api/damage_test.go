package api

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

// A room whose stored history is damaged answers 503 room_unavailable,
// saying so, while the other rooms of the node serve and /queue/healthz
// says the node is degraded. The log is damaged and repaired by
// damageRoom, and the room shows the gap in the repaired log.
func TestDamagedRoomOverHTTP(t *testing.T) {
	dir := t.TempDir()
	l, err := filelog.OpenOptions(dir, filelog.Options{SegmentSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	clock := newStillClock()
	w := newWorld(t, l, clock)
	alpha, _ := w.createRoom("alpha", 60)
	w.createRoom("beta", 60)
	for i := 0; i < 20; i++ {
		for _, slug := range []string{"alpha", "beta"} {
			if st, j, _ := w.do("POST", "/queue/"+slug+"/join", "", nil); st != http.StatusOK {
				t.Fatalf("join %s: %d %v", slug, st, j)
			}
		}
	}
	w.stop()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	out := damageRoom(t, dir, alpha)
	l, err = filelog.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	w = newWorld(t, l, clock)

	for _, r := range []struct{ method, path string }{{"GET", "/queue/alpha/status?number=1"}, {"POST", "/queue/alpha/join"}} {
		st, j, h := w.do(r.method, r.path, "", nil)
		if st != http.StatusServiceUnavailable || j["error"] != protocol.CodeRoomUnavailable || h.Get("Retry-After") == "" ||
			!strings.Contains(j["message"].(string), "damaged") {
			t.Errorf("%s %s: %d %v, want 503 room_unavailable saying the room's history is damaged", r.method, r.path, st, j)
		}
	}
	if st, j, _ := w.do("POST", "/queue/beta/join", "", nil); st != http.StatusOK {
		t.Fatalf("join beta beside the damaged room: %d %v", st, j)
	}
	st, j, _ := w.do("GET", "/queue/healthz", "", nil)
	if st != http.StatusOK || j["status"] != "degraded" || j["streamsDamaged"] != float64(1) || !strings.Contains(j["reason"].(string), "damaged") {
		t.Fatalf("healthz: %d %v, want degraded with one damaged stream", st, j)
	}
}

// damageRoom flips a bit in the room's first frame, in a sealed segment,
// empties its snapshots, which cover that frame, and repairs the log into
// a new directory, which it returns.
func damageRoom(t *testing.T, dir, id string) string {
	t.Helper()
	seg := filepath.Join(dir, "0000000001.seg")
	b, _ := os.ReadFile(seg)
	// The frame's kind and name length, then the room's id as its stream.
	at := bytes.Index(b, append([]byte{1, byte(len(id))}, id...))
	if _, err := os.Stat(filepath.Join(dir, "0000000002.seg")); at < 0 || err != nil {
		t.Fatalf("the room's first frame at %d of a sealed segment (%v)", at, err)
	}
	if err := faultfs.FlipBit(seg, at+2+len(id)+1, 0x04); err != nil {
		t.Fatal(err)
	}
	if _, err := filelog.Open(dir); err == nil {
		t.Fatal("the damaged log opens")
	}
	// The room's snapshots cover the lost frame: they are lost too.
	entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	lost := 0
	for _, e := range entries {
		p := filepath.Join(dir, "snapshots", e.Name())
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(id)) {
			lost++
			if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if lost == 0 {
		t.Fatal("the room has no snapshot")
	}
	out := filepath.Join(t.TempDir(), "log")
	if _, err := filelog.Repair(dir, out); err != nil {
		t.Fatal(err)
	}
	return out
}
