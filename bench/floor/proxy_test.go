package floor

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
	"github.com/aditus-queue/aditus-queue/transport/proxy"
)

// roomStore is one capacity room on the real table, as its grain keeps
// it, counting the calls that ask the room about a visitor.
type roomStore struct {
	mu    sync.Mutex
	table *capacity.Table
	asked map[string]int
}

// decide applies what fn decides at now and answers the visitor's status
// (the estimate for a provisional place), as the grain does.
func (s *roomStore) decide(call string, set capacity.Settings, v string, fn func(int64) []capacity.Event) (capacity.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked[call]++
	now := time.Now().UnixNano()
	for _, e := range append(s.table.Configure(set, "", "", now), fn(now)...) {
		s.table.Apply(0, e)
	}
	st := s.table.Status(v)
	if !st.Admitted && st.Position == 0 {
		st = s.table.Estimate()
		st.Arrived = now
	}
	return st, nil
}

func (s *roomStore) Check(_ context.Context, _ string, set capacity.Settings, v string) (capacity.Status, error) {
	return s.decide("check", set, v, func(now int64) []capacity.Event { return s.table.Check(v, now) })
}

func (s *roomStore) Arrive(_ context.Context, _ string, set capacity.Settings, v string) (capacity.Status, error) {
	return s.decide("arrive", set, v, func(now int64) []capacity.Event { return s.table.Arrive(v, now) })
}

func (s *roomStore) Confirm(_ context.Context, _ string, set capacity.Settings, v string, arrived int64) (capacity.Status, error) {
	return s.decide("confirm", set, v, func(now int64) []capacity.Event { return s.table.Confirm(v, arrived, now) })
}

func (s *roomStore) Touch(_ context.Context, _ string, b protocol.CapacityTouch) (protocol.CapacityTouchAnswer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.table.Touch(b.Visitors, time.Now().UnixNano())
	return protocol.CapacityTouchAnswer{Settings: s.table.Settings}, nil
}

func (s *roomStore) Release(context.Context, string, string) error { return nil }

func (s *roomStore) Key(context.Context, string) ([]byte, error) {
	return []byte(strings.Repeat("k", 32)), nil
}

func (s *roomStore) calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, n := range s.asked {
		out[k] = n
	}
	return out
}

// TestAdmittedCookieAsksNoRoom: the cookie `bench proxy` sends is an
// admitted visitor's, which the real gate lets through without asking the
// room; a provisional cookie (the first request's) would make every
// measured request a confirmation call to the room's grain.
func TestAdmittedCookieAsksNoRoom(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "shop") }))
	defer up.Close()
	cfg, err := proxy.Parse("t.hcl", fmt.Appendf(nil, capacityConf, proxyHost, strings.TrimPrefix(up.URL, "http://")))
	if err != nil {
		t.Fatal(err)
	}
	store := &roomStore{table: capacity.New(), asked: map[string]int{}}
	h, err := proxy.New(cfg, proxy.Options{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	cookie, err := admitted(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	before := store.calls()
	for range 20 {
		if c, err := ask(context.Background(), srv.URL+proxyPath, cookie); err != nil || c != "" {
			t.Fatalf("a request with the benchmark's cookie: new cookie %q, %v", c, err)
		}
	}
	if after := store.calls(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("requests with the benchmark's cookie asked the room: calls %v before, %v after", before, after)
	}
}
