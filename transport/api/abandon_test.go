package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// Abandon detection through the visitor API: heartbeats keep a number
// present, silent numbers just ahead of the window are skipped, and a
// skipped visitor who comes back is admitted all the same.
func TestAbandonDetectionThroughHTTP(t *testing.T) {
	clock := newStillClock()
	w := newWorld(t, memlog.New(), clock)
	id, _ := w.createRoom("stay", 30) // one every 2 s, burst 2.5
	const joins = 60
	tickets := make([]string, joins+1)
	for n := 1; n <= joins; n++ {
		_, j, _ := w.do("POST", "/queue/stay/join", "", nil)
		tickets[n] = j["ticket"].(string)
	}
	// Off: heartbeats are accepted silently, even without a ticket.
	if st, _, _ := w.do("POST", "/queue/stay/heartbeat", "", map[string]any{}); st != 204 {
		t.Fatalf("heartbeat with detection off: %d", st)
	}
	w.patchSite(id, func(s map[string]any) { s["abandon"] = map[string]any{"enabled": true, "graceSeconds": 60} })
	if st, m, _ := w.do("POST", "/queue/stay/heartbeat", "", map[string]any{"ticket": "forged"}); st != 401 {
		t.Fatalf("heartbeat with a forged ticket: %d %v", st, m)
	}
	if st, m, _ := w.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, map[string]any{"name": "x", "ratePerMinute": 30,
		"abandon": map[string]any{"enabled": true, "graceSeconds": 30}}); st != 422 || m["field"] != "abandon.graceSeconds" {
		t.Fatalf("grace of 30 s: %d %v, want 422 naming abandon.graceSeconds", st, m)
	}

	// Even numbers keep their page open, odd ones are gone.
	heartbeats := func() {
		t.Helper()
		for n := 2; n <= joins; n += 2 {
			if st, _, _ := w.do("POST", "/queue/stay/heartbeat", "", map[string]any{"ticket": tickets[n]}); st != http.StatusNoContent {
				t.Fatalf("heartbeat of %d: %d", n, st)
			}
		}
		time.Sleep(1200 * time.Millisecond) // the front forwards presence once a second
	}
	view := func() (serving, abandoned uint64) {
		r, ok, err := w.node.Views.BySlug(context.Background(), "stay")
		if err != nil || !ok {
			t.Fatalf("view: %v %v", ok, err)
		}
		return r.View.Serving(clock.Now().UnixNano()), r.View.Abandoned
	}
	heartbeats()
	for range 2 {
		clock.Advance(30 * time.Second)
		heartbeats()
	}
	// A minute on, nobody is gone yet: the window is where the rate put it.
	if s, a := view(); a != 0 || s != 32 {
		t.Fatalf("at the grace period: serving %d, %d abandoned; want 32 and none", s, a)
	}
	for s := 62; s <= 92; s += 2 {
		clock.Advance(2 * time.Second)
		// The grain samples, and looks for abandoned numbers, on its tick:
		// its dashboard sample of the clock's second exists once it ticked.
		at := clock.Now().Unix()
		waitFor(t, 10*time.Second, "a tick at the advanced clock", func() bool {
			r, err := w.node.Client.Stats(context.Background(), id, at-1)
			return err == nil && len(r.History) > 0 && r.History[len(r.History)-1].T >= at
		})
		if s == 90 {
			heartbeats()
		}
	}
	waitFor(t, 3*time.Second, "abandoned numbers counted", func() bool { _, a := view(); return a > 0 })
	serving, abandoned := view()
	// 32 s more at one every 2 s, and one more for each number skipped;
	// only odd numbers may have been counted.
	if serving != 48+abandoned || abandoned > (serving-32)/2+1 || abandoned < 5 {
		t.Fatalf("after 92 s: serving %d with %d abandoned, want 48 + abandoned, only odd numbers counted", serving, abandoned)
	}
	t.Logf("serving %d, %d abandoned", serving, abandoned)

	// Number 35 was counted as gone; it comes back and is admitted.
	if st, _, _ := w.do("POST", "/queue/stay/heartbeat", "", map[string]any{"ticket": tickets[35]}); st != 204 {
		t.Fatalf("heartbeat of a returning visitor: %d", st)
	}
	st, s, _ := w.do("GET", "/queue/stay/status?ticket="+tickets[35], "", nil)
	if st != 200 || s["admitted"] != true {
		t.Fatalf("returning visitor 35: %d %v", st, s)
	}
	if st, g, _ := w.do("POST", "/queue/stay/token", "", map[string]any{"ticket": tickets[35]}); st != 200 || g["number"] != 35.0 {
		t.Fatalf("token of returning visitor 35: %d %v", st, g)
	}
}
