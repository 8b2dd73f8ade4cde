package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// TestKeyThatDoesNotOpenClosesTheRoom: a proxy node whose master key is
// not the member's reads the room's sealed cookie key but cannot open it.
// That is a fault of the configuration, not an outage: with
// on_store_error = "admit" the room still answers 503 with the page and
// Retry-After to every request, and the gauge counts it.
func TestKeyThatDoesNotOpenClosesTheRoom(t *testing.T) {
	n := nodetest.Start(t, node.Config{Member: true})
	otherKey, _ := seal.NewSealer([]byte(strings.Repeat("x", seal.KeySize)))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var reached atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(up.Close)
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf(`host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = 100
      on_store_error = "admit"
      refresh        = "7s"
    }
  }
}`, up.Listener.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, Options{Store: ClusterStore{Client: n.Client, Opener: otherKey}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	passed := 0
	for i := range 50 {
		r := httptest.NewRequest("GET", "http://shop.test/", nil)
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1000", i)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable {
			passed++
			continue
		}
		if w.Header().Get("Retry-After") != "7" || !strings.Contains(w.Body.String(), "<") {
			t.Fatalf("request %d: Retry-After %q, page %q", i, w.Header().Get("Retry-After"), w.Body.String())
		}
	}
	if passed != 0 || reached.Load() != 0 {
		t.Errorf("%d of 50 requests passed (%d reached the upstream), want 0", passed, reached.Load())
	}
	if got := metric(t, h, "aditus_queue_proxy_rooms_unavailable"); got != 1 {
		t.Errorf("aditus_queue_proxy_rooms_unavailable = %v, want 1", got)
	}
}
