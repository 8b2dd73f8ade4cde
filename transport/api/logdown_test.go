package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// While the room's log cannot be written, a join is answered 503
// log_unavailable with Retry-After at once, status and info keep answering
// from the last view, and joins come back on their own. "At once" is the
// code: a join the grain left unanswered would end in the call's timeout,
// answered "unavailable"; only the grain's own answer is log_unavailable.
// How long it took is logged, not asserted (BenchmarkJoinLogDown would be
// the place for a figure).
func TestJoinWhileTheLogIsDown(t *testing.T) {
	l := memlog.New()
	e := newEnvOn(t, l)
	e.createRoom("outage", 60)
	st, j, _ := e.do("POST", "/queue/outage/join", "", nil)
	if st != http.StatusOK {
		t.Fatalf("join: %d %v", st, j)
	}
	ticket := j["ticket"].(string)
	l.SetDown(true)
	start := time.Now()
	var (
		m map[string]any
		h http.Header
	)
	for i := 0; ; i++ {
		st, m, h = e.do("POST", "/queue/outage/join", "", nil)
		if st != http.StatusOK {
			break
		}
		if i > 1000 {
			t.Fatal("joins never failed while the log was down")
		}
	}
	took := time.Since(start)
	t.Logf("first 503 %v after the log went down", took)
	if st != http.StatusServiceUnavailable || m["error"] != "log_unavailable" || m["message"] == "" || h.Get("Retry-After") == "" {
		t.Fatalf("join with the log down: got %d %v Retry-After %q, want 503 log_unavailable with Retry-After", st, m, h.Get("Retry-After"))
	}
	if st, s, _ := e.do("GET", "/queue/outage/status?ticket="+ticket, "", nil); st != http.StatusOK || s["number"].(float64) != 1 {
		t.Fatalf("status with the log down: %d %v", st, s)
	}
	if st, s, _ := e.do("GET", "/queue/outage/info", "", nil); st != http.StatusOK {
		t.Fatalf("info with the log down: %d %v", st, s)
	}
	l.SetDown(false)
	waitFor(t, 15*time.Second, "joins to resume", func() bool {
		st, _, _ := e.do("POST", "/queue/outage/join", "", nil)
		return st == http.StatusOK
	})
}
