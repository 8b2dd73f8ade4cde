package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// Arrive and Confirm complete tableStore (handler_test.go) as a Store.

func (s *tableStore) Arrive(_ context.Context, room string, set capacity.Settings, v string) (capacity.Status, error) {
	return s.do(room, set, v, func(t *capacity.Table, now int64) []capacity.Event {
		s.pow.Arrived(1)
		return t.Arrive(v, now)
	})
}

func (s *tableStore) Confirm(_ context.Context, room string, set capacity.Settings, v string, arrived int64) (capacity.Status, error) {
	return s.do(room, set, v, func(t *capacity.Table, now int64) []capacity.Event { return t.Confirm(v, arrived, now) })
}

// do applies what fn decides, as the grain does, and answers the status
// (the estimate for a provisional place).
func (s *tableStore) do(room string, set capacity.Settings, v string, fn func(*capacity.Table, int64) []capacity.Event) (capacity.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return capacity.Status{}, fmt.Errorf("store down")
	}
	s.checks++
	t := s.table(room, set)
	for _, e := range fn(t, s.clock()) {
		t.Apply(0, e)
	}
	s.decidePow(t)
	st := t.Status(v)
	if !st.Admitted && st.Position == 0 {
		st = t.Estimate()
		st.Arrived = s.clock()
	}
	return st, nil
}

// fakeRoom is a handler over a tableStore with a fake clock, for the
// admission rules of one capacity room (shop.test, location /).
type fakeRoom struct {
	h     *Handler
	store *tableStore
	now   time.Time
}

func newFakeRoom(t testing.TB, block string) *fakeRoom {
	t.Helper()
	f := &fakeRoom{now: time.Unix(1_800_000_000, 0)}
	clock := func() time.Time { return f.now }
	f.store = &tableStore{tables: map[string]*capacity.Table{}, now: clock}
	cfg, err := Parse("t.hcl", []byte(`host "shop.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      `+block+`
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	f.h, err = New(cfg, Options{Store: f.store, Now: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.h.Close)
	return f
}

// get sends a request from addr with cookie (may be empty) and returns the
// answer and the cookie to send next (the one set, else the one sent).
func (f *fakeRoom) get(addr, cookie string) (*httptest.ResponseRecorder, string) {
	w := f.send(addr, cookie)
	for _, c := range w.Result().Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	return w, cookie
}

// place is the place in line a waiting page shows.
func place(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	m := regexp.MustCompile(`id="position">([^<]*)<`).FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("no place on the page (%d): %s", w.Code, w.Body.String())
	}
	return m[1]
}

// TestGateProvisionalPlace: a first request in a full room gets the page,
// "about N ahead" and a cookie, and nobody counts it; its return takes the
// place of its first request, ahead of a visitor who came in between.
func TestGateProvisionalPlace(t *testing.T) {
	f := newFakeRoom(t, `active = 1
      on_store_error = "wait"`)
	if w, _ := f.get("192.0.2.1", ""); w.Code != 200 {
		t.Fatalf("first visitor of an empty room: %d", w.Code)
	}
	_, early := f.get("192.0.2.2", "")
	_, early = f.get("192.0.2.2", early) // back: a real place, 1
	f.now = f.now.Add(time.Second)
	w, p := f.get("192.0.2.3", "")
	if w.Code != 503 || w.Header().Get("Retry-After") != "10" || p == "" {
		t.Fatalf("first request: %d, Retry-After %q, cookie %q", w.Code, w.Header().Get("Retry-After"), p)
	}
	if got := place(t, w); got != "about 1 ahead" {
		t.Fatalf("first request shows %q, want about 1 ahead", got)
	}
	f.now = f.now.Add(time.Second)
	_, later := f.get("192.0.2.4", "")
	if w, _ := f.get("192.0.2.4", later); place(t, w) != "2" {
		t.Fatalf("a visitor after a provisional place is at %s, want 2", place(t, w))
	}
	f.now = f.now.Add(10 * time.Second) // the page refreshes
	if w, _ := f.get("192.0.2.3", p); place(t, w) != "2" {
		t.Fatalf("provisional place confirmed at %s, want 2 (its first request's order)", place(t, w))
	}
	if w, _ := f.get("192.0.2.4", later); place(t, w) != "3" {
		t.Fatalf("the later visitor is at %s, want 3", place(t, w))
	}
	if w, _ := f.get("192.0.2.2", early); place(t, w) != "1" {
		t.Fatalf("the earlier visitor is at %s, want 1", place(t, w))
	}
}

// TestGateCookieDropperNeverAhead floods a full room with first requests
// that never come back: a visitor arriving after them is first in line.
func TestGateCookieDropperNeverAhead(t *testing.T) {
	f := newFakeRoom(t, `active = 1
      on_store_error = "wait"
      address_budget { burst = 1000 }`)
	f.get("192.0.2.1", "")
	for i := 0; i < 500; i++ {
		if w, _ := f.get("198.51.100.9", ""); w.Code != 503 {
			t.Fatalf("flood request %d: %d", i, w.Code)
		}
	}
	_, c := f.get("192.0.2.5", "")
	f.now = f.now.Add(10 * time.Second)
	if w, _ := f.get("192.0.2.5", c); place(t, w) != "1" {
		t.Fatalf("after 500 cookie-less requests a visitor is at %s, want 1", place(t, w))
	}
}

// TestGateAddressBudget: past its burst, an address's first requests get
// the page with no place, 503, Retry-After and no cookie; another address
// and a visitor with a cookie are not affected; the refusals are counted;
// the budget refills at its rate.
func TestGateAddressBudget(t *testing.T) {
	f := newFakeRoom(t, `active = 1
      on_store_error = "wait"
      address_budget {
        per_minute = 6
        burst      = 3
      }`)
	f.get("192.0.2.1", "")
	var kept string
	for i := 0; i < 3; i++ {
		w, c := f.get("203.0.113.7", "")
		if w.Code != 503 || c == "" || !strings.HasPrefix(place(t, w), "about") {
			t.Fatalf("request %d within the burst: %d, cookie %q", i, w.Code, c)
		}
		kept = c
	}
	checks := f.store.checks
	w, c := f.get("203.0.113.7", "")
	if w.Code != 503 || c != "" || w.Header().Get("Retry-After") != "10" || place(t, w) != "…" {
		t.Fatalf("over budget: %d, cookie %q, Retry-After %q, place %q; want 503, none, 10, …",
			w.Code, c, w.Header().Get("Retry-After"), place(t, w))
	}
	if f.store.checks != checks {
		t.Fatalf("a refused request reached the store")
	}
	if got := refusals(t, f.h); got != 1 {
		t.Fatalf("refusals counted %v, want 1", got)
	}
	if w, _ := f.get("203.0.113.7", kept); place(t, w) != "1" {
		t.Fatalf("a visitor with a cookie from that address is at %q, want 1", place(t, w))
	}
	if w, c := f.get("203.0.113.8", ""); c == "" || w.Code != 503 {
		t.Fatalf("another address was refused: %d", w.Code)
	}
	f.now = f.now.Add(10 * time.Second) // one token at 6 a minute
	if _, c := f.get("203.0.113.7", ""); c == "" {
		t.Fatalf("no token after the Retry-After")
	}
}

// refusals reads the handler's refusal counter as /metrics would.
func refusals(t *testing.T, h *Handler) float64 {
	t.Helper()
	return metric(t, h, "aditus_queue_proxy_address_budget_refusals_total")
}

// metric reads the handler's metric name (its first series) as /metrics
// would.
func metric(t *testing.T, h *Handler, name string) float64 {
	t.Helper()
	return gather(t, h.Collector(), name)
}

// gather reads collector c's metric name (its first series).
func gather(t *testing.T, c prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestGateProvisionalPlaceClockSkew: the cookie keeps the room's time of a
// first request, not the proxy node's, so a node whose clock is 40 s
// behind the room's still confirms the place in its order of arrival.
func TestGateProvisionalPlaceClockSkew(t *testing.T) {
	f := newFakeRoom(t, `active = 1
      on_store_error = "wait"`)
	f.store.now = func() time.Time { return f.now.Add(40 * time.Second) }
	f.get("192.0.2.1", "")
	_, first := f.get("192.0.2.2", "")
	f.now = f.now.Add(time.Second)
	_, later := f.get("192.0.2.3", "")
	f.now = f.now.Add(time.Second)
	if w, _ := f.get("192.0.2.3", later); place(t, w) != "1" {
		t.Fatalf("the later visitor, back first, is at %q, want 1 for now", place(t, w))
	}
	f.now = f.now.Add(8 * time.Second)
	if w, _ := f.get("192.0.2.2", first); place(t, w) != "1" {
		t.Fatalf("the first visitor came back at %q, want 1 (its first request's order)", place(t, w))
	}
}
