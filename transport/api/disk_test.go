package api

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

// A failed fsync turns the node unhealthy with the reason, and joins are
// answered 503 log_unavailable at once, even in a room that still holds
// reserved numbers.
func TestFailedFsyncMakesTheNodeUnhealthy(t *testing.T) {
	dir := t.TempDir()
	fsys := &faultfs.FS{}
	l, err := filelog.OpenOptions(dir, filelog.Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e := newEnvOn(t, l)
	e.createRoom("disk", 6000)
	if st, m, _ := e.do("POST", "/queue/disk/join", "", nil); st != http.StatusOK {
		t.Fatalf("join: %d %v", st, m)
	}
	fsys.FailSync.Store(true)
	if st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "disk-2", "name": "x", "ratePerMinute": 1}); st != http.StatusServiceUnavailable {
		t.Fatalf("create on a failing disk: %d %v", st, m)
	}
	var m map[string]any
	waitFor(t, 10*time.Second, "healthz to turn unhealthy", func() bool {
		var st int
		st, m, _ = e.do("GET", "/queue/healthz", "", nil)
		return st == http.StatusServiceUnavailable
	})
	if m["status"] != "unhealthy" || !strings.Contains(m["reason"].(string), "event log failed") || strings.Contains(m["reason"].(string), dir) {
		t.Fatalf("healthz: got %v, want unhealthy with a reason that leaves the path out", m)
	}
	start := time.Now()
	st, j, h := e.do("POST", "/queue/disk/join", "", nil)
	if st != http.StatusServiceUnavailable || j["error"] != "log_unavailable" || h.Get("Retry-After") == "" {
		t.Fatalf("join on a failed log: got %d %v, want 503 log_unavailable", st, j)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("join on a failed log answered after %v, want at once", took)
	}
}

// Under the free-space floor a new room is refused with 507 and the
// guard's words; the rooms there are go on.
func TestLowDiskRefusesNewRooms(t *testing.T) {
	var low atomic.Bool
	e := newEnvWith(t, func(_ *grain.Deps, c *Config) {
		c.RoomGuard = func() error {
			if low.Load() {
				return errors.New("the event log's disk has 10 MiB free, under the floor of 1 GiB (--min-free-disk)")
			}
			return nil
		}
	})
	e.createRoom("first", 60)
	low.Store(true)
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "second", "name": "x", "ratePerMinute": 1})
	if st != http.StatusInsufficientStorage || m["error"] != "insufficient_storage" || !strings.Contains(m["message"].(string), "--min-free-disk") {
		t.Fatalf("create under the floor: got %d %v, want 507 insufficient_storage", st, m)
	}
	if st, m, _ := e.do("POST", "/queue/first/join", "", nil); st != http.StatusOK {
		t.Fatalf("join in an existing room under the floor: %d %v", st, m)
	}
}
