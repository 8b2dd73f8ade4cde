package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// tableStore is a Store over one capacity.Table per room in this process,
// for fast tests of the handler (the real store is the cluster's grain,
// tested with real processes in the main package).
type tableStore struct {
	mu      sync.Mutex
	tables  map[string]*capacity.Table
	touches int
	checks  int
	down    bool
	now     func() time.Time
	// pow counts arrivals for one room's automatic proof of work.
	pow capacity.PowCounter
}

func (s *tableStore) clock() int64 {
	if s.now != nil {
		return s.now().UnixNano()
	}
	return time.Now().UnixNano()
}

func (s *tableStore) table(room string, set capacity.Settings) *capacity.Table {
	t, ok := s.tables[room]
	if !ok {
		t = capacity.New()
		s.tables[room] = t
	}
	for _, e := range t.Configure(set, "", "", s.clock()) {
		t.Apply(0, e)
	}
	return t
}

func (s *tableStore) Check(_ context.Context, room string, set capacity.Settings, v string) (capacity.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return capacity.Status{}, fmt.Errorf("store down")
	}
	s.checks++
	t := s.table(room, set)
	for _, e := range t.Check(v, s.clock()) {
		t.Apply(0, e)
	}
	s.decidePow(t)
	return t.Status(v), nil
}

func (s *tableStore) Touch(_ context.Context, room string, b protocol.CapacityTouch) (protocol.CapacityTouchAnswer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touches++
	t := s.tables[room]
	if b.Settings.Validate() == nil {
		t = s.table(room, b.Settings)
	}
	if t == nil {
		return protocol.CapacityTouchAnswer{}, nil
	}
	t.Touch(b.Visitors, s.clock())
	s.pow.Arrived(b.Challenged)
	s.decidePow(t)
	return protocol.CapacityTouchAnswer{Pow: t.PowBits(), Settings: t.Settings, Version: t.Runtime.Version}, nil
}

// decidePow applies the automatic proof of work's change, as the grain
// does.
func (s *tableStore) decidePow(t *capacity.Table) {
	for _, e := range s.pow.Decide(t, s.clock()) {
		t.Apply(0, e)
	}
}

func (s *tableStore) Release(_ context.Context, room, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[room]
	for _, e := range t.Release(v, s.clock()) {
		t.Apply(0, e)
	}
	return nil
}

func (s *tableStore) Key(context.Context, string) ([]byte, error) {
	return []byte(strings.Repeat("k", 32)), nil
}

// TestHandlerConcurrentVisitors runs many visitors through the handler at
// once (run it with -race): admitted visitors pass on their cookie, their
// requests reach the store in batches, never more than active are let in,
// and releases free slots.
func TestHandlerConcurrentVisitors(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/done" {
			w.Header().Set(ReleaseHeader, "1")
		}
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf(`host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = 4
      on_store_error = "wait"
      refresh        = "1s"
    }
  }
}`, strings.TrimPrefix(up.URL, "http://"))))
	if err != nil {
		t.Fatal(err)
	}
	store := &tableStore{tables: map[string]*capacity.Table{}}
	h, err := New(cfg, Options{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	inside, most := 0, 0
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cookie string
			do := func(path string) int {
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				req.Host = "shop.test"
				if cookie != "" {
					req.Header.Set("Cookie", cookie)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				for _, c := range res.Cookies() {
					cookie = c.Name + "=" + c.Value
				}
				return res.StatusCode
			}
			if !testwait.Poll(30*time.Second, 20*time.Millisecond, func() bool { return do("/") == 200 }) {
				t.Error("never admitted")
				return
			}
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			for k := 0; k < 20; k++ {
				if st := do("/page"); st != 200 {
					t.Errorf("inside got %d", st)
				}
				time.Sleep(60 * time.Millisecond)
			}
			mu.Lock()
			inside--
			mu.Unlock()
			do("/done")
		}()
	}
	wg.Wait()
	h.Close()
	if most > 4 {
		t.Fatalf("%d inside at once, more than 4", most)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.touches == 0 || store.touches > 100 {
		t.Fatalf("%d renewal batches for 240 requests", store.touches)
	}
}

// TestRenewalInLastFifth checks with a fake clock that an admitted visitor
// is checked from the cookie alone until the last fifth of the session,
// then renewed by the store with a new cookie.
func TestRenewalInLastFifth(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	store := &tableStore{tables: map[string]*capacity.Table{}, now: clock}
	cfg, err := Parse("t.hcl", []byte(`host "shop.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      active         = 1
      on_store_error = "wait"
      session        = "10s"
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, Options{Store: store, Now: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cookie := ""
	do := func() (int, bool) {
		req := httptest.NewRequest("GET", "/testdata/", nil)
		req.Host = "shop.test"
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		cs := w.Result().Cookies()
		for _, c := range cs {
			cookie = c.Name + "=" + c.Value
		}
		return w.Code, len(cs) > 0
	}
	if st, set := do(); st != 200 || !set {
		t.Fatalf("first request: %d, cookie %v", st, set)
	}
	for _, tc := range []struct {
		at      time.Duration
		checks  int
		renewed bool
	}{
		{5 * time.Second, 1, false}, // cookie alone
		{7900 * time.Millisecond, 1, false},
		{8100 * time.Millisecond, 2, true}, // last fifth: renewed
		{15 * time.Second, 2, false},       // the new cookie runs to 18.1 s
		{16500 * time.Millisecond, 3, true},
	} {
		now = time.Unix(1_800_000_000, 0).Add(tc.at)
		st, set := do()
		store.mu.Lock()
		checks := store.checks
		store.mu.Unlock()
		if st != 200 || set != tc.renewed || checks != tc.checks {
			t.Fatalf("at %v: status %d, new cookie %v, store checks %d; want 200, %v, %d", tc.at, st, set, checks, tc.renewed, tc.checks)
		}
	}
}
