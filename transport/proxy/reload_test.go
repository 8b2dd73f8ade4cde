package proxy

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// The file after: the room's location serves another directory, and a
// host with a room of its own is added.
const reloadAfter = `host "shop.test" {
  location "/" {
    static_files { directory = "%s" }
    waiting_room {
      active         = 1
      on_store_error = "wait"
      refresh        = "2s"
    }
  }
}
host "tickets.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      active         = 5
      on_store_error = "wait"
    }
  }
}
`

// TestReloadKeepsLineAndSlots holds one visitor inside and two in line,
// reloads a changed file (a location's directory changed, a host added):
// the holder is still inside, the line in its order, the new host's room
// serves; a file that does not parse is refused, logged and counted, and
// the configuration in force keeps serving.
func TestReloadKeepsLineAndSlots(t *testing.T) {
	f := &fakeRoom{now: time.Unix(1_800_000_000, 0)}
	f.store = &tableStore{tables: map[string]*capacity.Table{}, now: func() time.Time { return f.now }}
	path := filepath.Join(t.TempDir(), "proxy.hcl")
	write := func(src string) {
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(runtimeRoom)
	var logs strings.Builder
	r, err := NewReloadable(path, Options{Store: f.store, Now: func() time.Time { return f.now }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	get := func(host, cookie string) (*httptest.ResponseRecorder, string) {
		req := httptest.NewRequest("GET", "http://"+host+"/", nil)
		req.RemoteAddr = "192.0.2.1:1000"
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		for _, c := range w.Result().Cookies() {
			cookie = c.Name + "=" + c.Value
		}
		return w, cookie
	}
	_, holder := get("shop.test", "")
	get("shop.test", holder) // back: the slot for a whole session
	_, first := get("shop.test", "")
	_, second := get("shop.test", "")
	f.now = f.now.Add(time.Second)
	get("shop.test", first)
	f.now = f.now.Add(time.Second)
	get("shop.test", second)
	f.now = f.now.Add(3 * time.Second)

	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	write(fmt.Sprintf(reloadAfter, dir))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if w, _ := get("shop.test", holder); w.Code != 200 || !strings.Contains(w.Body.String(), "seed004_basic.hcl") {
		t.Fatalf("the slot holder after the reload: %d, want 200 from the new directory:\n%.300s", w.Code, w.Body.String())
	}
	if w, _ := get("shop.test", first); place(t, w) != "1" {
		t.Fatalf("the first in line after the reload is at %q, want 1", place(t, w))
	}
	if w, _ := get("shop.test", second); place(t, w) != "2" {
		t.Fatalf("the second in line after the reload is at %q, want 2", place(t, w))
	}
	if w, _ := get("tickets.test", ""); w.Code != 200 {
		t.Fatalf("the added host: %d, want 200", w.Code)
	}

	write(`host "shop.test" { location "/" {`)
	if err := r.Reload(); err == nil {
		t.Fatal("a file that does not parse was taken")
	}
	if w, _ := get("tickets.test", ""); w.Code != 200 {
		t.Fatalf("after a refused reload the configuration in force stopped serving: %d", w.Code)
	}
	if !strings.Contains(logs.String(), "configuration not reloaded") {
		t.Fatalf("the refused reload was not logged:\n%s", logs.String())
	}
	for name, want := range map[string]float64{"aditus_queue_proxy_config_reloads_total": 1, "aditus_queue_proxy_config_reload_failures_total": 1} {
		if got := reloadMetric(t, r, name); got != want {
			t.Fatalf("%s = %v, want %v", name, got, want)
		}
	}
	if got := len(f.store.tables); got != 2 {
		t.Fatalf("%d rooms in the store, want 2", got)
	}
}

// reloadMetric reads r's metric name as /metrics would.
func reloadMetric(t *testing.T, r *Reloadable, name string) float64 {
	t.Helper()
	return gather(t, r.Collector(), name)
}
