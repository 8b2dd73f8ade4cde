package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

const runtimeRoom = `host "shop.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      active         = 1
      on_store_error = "wait"
      refresh        = "2s"
    }
  }
}`

// clusterProxy is a proxy node named name in front of n's capacity grains,
// its clock ahead of the room's by *skew (nil: none), so that a test can
// step past the refresh interval a waiting visitor's answer is kept.
func clusterProxy(t *testing.T, n *node.Node, name, hcl string, skew *atomic.Int64) *Handler {
	t.Helper()
	cfg, err := Parse("t.hcl", []byte(hcl))
	if err != nil {
		t.Fatal(err)
	}
	if skew == nil {
		skew = new(atomic.Int64)
	}
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	h, err := New(cfg, Options{Store: ClusterStore{Client: n.Client, Opener: nodetest.Sealer}, Node: name, Now: now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// send is one request from addr with cookie; it returns the status and the
// cookie to send next.
func send(h *Handler, addr, cookie string) (int, string) {
	r := httptest.NewRequest("GET", "http://shop.test/", nil)
	r.RemoteAddr = addr + ":1000"
	if cookie != "" {
		r.Header.Set("Cookie", cookie)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	for _, c := range w.Result().Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	return w.Code, cookie
}

// waitFor waits until cond holds, checking as the proxies' batches come
// back; it fails the test past limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		<-tick.C
	}
	return time.Since(start)
}

// TestRuntimeChangeReachesEveryProxy: two proxy nodes serve one capacity
// room from the same file (active 1). An operator raises active, and
// narrows the address budget: both nodes learn the new runtime version
// within a second (the budget they enforce with it), the waiting visitor
// goes in at once, the room lists both nodes and names what differs from
// the file. A proxy node that starts afterwards, with the same file,
// takes the runtime values, not the file's.
func TestRuntimeChangeReachesEveryProxy(t *testing.T) {
	n := nodetest.Start(t, node.Config{Member: true})
	var skew atomic.Int64
	p1 := clusterProxy(t, n, "proxy-1", runtimeRoom, nil)
	p2 := clusterProxy(t, n, "proxy-2", runtimeRoom, &skew)
	if code, _ := send(p1, "192.0.2.1", ""); code != 200 {
		t.Fatalf("first visitor: %d, want 200", code)
	}
	code, waiting := send(p2, "192.0.2.2", "")
	if code != 503 {
		t.Fatalf("second visitor with active 1: %d, want 503", code)
	}
	if code, waiting = send(p2, "192.0.2.2", waiting); code != 503 {
		t.Fatalf("second visitor back: %d, want 503 (in line)", code)
	}
	id := protocol.CapacityID("shop.test", "/")
	ctx := context.Background()
	waitFor(t, 5*time.Second, "both nodes reporting", func() bool {
		st, err := n.Client.CapacityState(ctx, id)
		return err == nil && len(st.Nodes) == 2
	})
	two := 2
	st, err := n.Client.CapacityAdjust(ctx, id, capacity.Adjust{Version: 0, Active: &two,
		AddressBudget: &rate.AddressBudget{PerMinute: 1, Burst: 1}}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if st.Settings.Active != 2 || st.File.Active != 1 || !slices.Equal(st.Differs, []string{"active", "addressBudget"}) {
		t.Fatalf("after the change: settings %+v file %+v differs %v", st.Settings, st.File, st.Differs)
	}
	learnt := func(hs ...*Handler) func() bool {
		return func() bool {
			for _, h := range hs {
				if v, _ := h.RuntimeVersion("shop.test", "/"); v != 1 {
					return false
				}
			}
			return true
		}
	}
	took := waitFor(t, time.Second, "the change on both proxy nodes", learnt(p1, p2))
	t.Logf("both proxy nodes had the change after %v", took)
	skew.Add(int64(2 * time.Second)) // past the refresh interval: p2 asks the room again
	if code, _ := send(p2, "192.0.2.2", waiting); code != 200 {
		t.Fatalf("the waiting visitor after active 2: %d, want 200", code)
	}
	waitFor(t, 2*time.Second, "the gauges on /metrics", func() bool {
		return metric(t, p1, "aditus_queue_capacity_active") == 2 && metric(t, p1, "aditus_queue_capacity_inside") == 2 &&
			metric(t, p1, "aditus_queue_capacity_runtime_version") == 1
	})
	// The narrowed budget holds on each node: one new visitor an address.
	for _, p := range []*Handler{p1, p2} {
		send(p, "198.51.100.7", "")
		if code, _ := send(p, "198.51.100.7", ""); code != 503 || refusals(t, p) != 1 {
			t.Fatalf("second first request of one address: %d, refusals %v; want 503 and 1", code, refusals(t, p))
		}
	}
	waitFor(t, 5*time.Second, "the refusals reported", func() bool {
		st, err := n.Client.CapacityState(ctx, id)
		return err == nil && st.Refusals == 2
	})
	// A proxy node started now, from the same file, runs the room as
	// changed.
	p3 := clusterProxy(t, n, "proxy-3", runtimeRoom, nil)
	send(p3, "203.0.113.9", "")
	waitFor(t, time.Second, "the change on a new proxy node", learnt(p3))
	if code, _ := send(p3, "203.0.113.9", ""); code != 503 {
		t.Fatalf("a new node enforces the file's budget: %d, want 503", code)
	}
}

// TestWaitingBudgetFollowsRuntime: the grain calls an address's cookies
// may make follow the address budget in force, not the file's: narrowed
// at runtime to one visitor a minute (a burst of one), an address gets
// two calls, where the file's default budget gives it ninety; widened, it
// gets the wider budget's.
func TestWaitingBudgetFollowsRuntime(t *testing.T) {
	rig := newFastRig(t, "")
	g := rig.h.gates[0]
	at := time.Now()
	g.now = func() time.Time { return at }
	calls := func(addr string) int {
		r := httptest.NewRequest("GET", "http://shop.test/", nil)
		r.RemoteAddr = addr + ":1000"
		n := 0
		for ok, _ := g.waiting.take(r); ok && n < 10_000; ok, _ = g.waiting.take(r) {
			n++
		}
		return n
	}
	learn := func(b rate.AddressBudget, version int64) {
		s := g.room.Settings
		s.AddressBudget = b
		g.learn(protocol.CapacityTouchAnswer{Settings: s, Version: version})
	}
	if n := calls("198.51.100.1"); n != rate.DefaultBudgetBurst+rate.DefaultBudgetPerMinute {
		t.Fatalf("under the file's budget: %d calls, want %d", n, rate.DefaultBudgetBurst+rate.DefaultBudgetPerMinute)
	}
	learn(rate.AddressBudget{PerMinute: 1, Burst: 1}, 1)
	if n := calls("198.51.100.2"); n != 2 {
		t.Fatalf("under the narrowed budget: %d calls, want 2", n)
	}
	learn(rate.AddressBudget{PerMinute: 600, Burst: 200}, 2)
	if n := calls("198.51.100.3"); n != 800 {
		t.Fatalf("under the widened budget: %d calls, want 800", n)
	}
}
