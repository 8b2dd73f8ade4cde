package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// lookupsOf reads aditus_queue_room_lookups_total.
func lookupsOf(t *testing.T, e *env) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^aditus_queue_room_lookups_total (\d+)$`).FindSubmatch(metricsOf(e.registry))
	if m == nil {
		t.Fatal("no aditus_queue_room_lookups_total")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// Unknown room names: 100 simultaneous requests for one name make one
// lookup in the directory (the others wait for it, then the miss is
// remembered); one address trying names gets its budget of lookups, then
// 429 with Retry-After, counted, while another address still gets 404.
func TestUnknownRoomLookups(t *testing.T) {
	clock := newStillClock()
	e := newEnvWith(t, func(_ *grain.Deps, c *Config) { c.Now = clock.Now })
	e.createRoom("spring", 60)
	before := lookupsOf(t, e)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			<-start
			if st, _, _ := e.do("GET", "/queue/ghost/status", "", nil); st != http.StatusNotFound {
				t.Errorf("unknown room: %d, want 404", st)
			}
		})
	}
	close(start)
	wg.Wait()
	ghost := lookupsOf(t, e) - before
	if ghost > 2 {
		t.Fatalf("100 simultaneous requests for one unknown name made %d lookups, want 1 (2 if the first ended before the last began)", ghost)
	}
	refused := 0
	for i := range lookupBurst + 10 {
		st, m, h := e.do("GET", "/queue/ghost-"+strconv.Itoa(i)+"/status", "", nil)
		switch {
		case st == http.StatusNotFound:
		case st == http.StatusTooManyRequests && m["error"] == "rate_limited" && h.Get("Retry-After") != "":
			refused++
		default:
			t.Fatalf("name %d: %d %v", i, st, m)
		}
	}
	if refused != 10+ghost {
		t.Fatalf("%d of %d unknown names refused, want the %d beyond the burst of %d", refused, lookupBurst+10, 10+ghost, lookupBurst)
	}
	if !regexp.MustCompile(`(?m)^aditus_queue_room_lookups_refused_total ` + strconv.Itoa(refused) + `$`).Match(metricsOf(e.registry)) {
		t.Fatal("refusals not counted")
	}
	if st, _, _ := e.do("GET", "/queue/spring/status", "", nil); st == http.StatusTooManyRequests {
		t.Fatal("a room that exists was refused: known rooms cost no lookup")
	}
	other := visitorFrom(t, "127.0.0.2")
	res, err := other.Get(e.srv.URL + "/queue/ghost-99/status")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("another address: %d, want 404", res.StatusCode)
	}
}

// The unknown names a node remembers are kept in an LRU: past 10,000 of
// them the most recent are still remembered (the table is not emptied
// whole), so asking one again makes no lookup.
func TestUnknownRoomMissesKeptInLRU(t *testing.T) {
	if testing.Short() {
		t.Skip("10,001 lookups")
	}
	var cfg *Config
	e := newEnvWith(t, func(_ *grain.Deps, c *Config) { cfg = c })
	views := cfg.Node.Views
	ctx := context.Background()
	for i := range 10_001 {
		if _, ok, err := views.BySlug(ctx, "nobody-"+strconv.Itoa(i)); ok || err != nil {
			t.Fatalf("name %d: %v %v", i, ok, err)
		}
	}
	before := lookupsOf(t, e)
	for i := 10_001 - 100; i < 10_001; i++ {
		views.BySlug(ctx, "nobody-"+strconv.Itoa(i))
	}
	if got := lookupsOf(t, e) - before; got != 0 {
		t.Fatalf("the last 100 unknown names asked again made %d lookups, want 0", got)
	}
}

// The waiting page's socket shares the address's budget of lookups of
// unknown names with the API: beyond it, 429 rate_limited with
// Retry-After before any upgrade.
func TestUnknownRoomLookupsSocket(t *testing.T) {
	clock := newStillClock()
	n := nodetest.Start(t, node.Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Sealer: sealer, Hash: sha, Logger: testLogger()}})
	hub, err := ws.NewHub(n.Views, testLogger(), clock.Now, ws.Limits{PerTicket: ws.DefaultPerTicket, PerNode: ws.DefaultPerNode})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Node: n.Front, PublicURL: "http://queue.test", AdminTokenHash: sha(adminTok), Hash: sha, Logger: testLogger(),
		Registry: prometheus.NewRegistry(), Now: clock.Now, Extra: []func(*echo.Echo){hub.Register}})
	hub.AllowLookup = s.AllowLookup
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		hub.Close()
	})
	e := &env{t: t, srv: srv}
	for i := range lookupBurst {
		if st, _, _ := e.do("GET", "/queue/ghost-"+strconv.Itoa(i)+"/ws?ticket=x", "", nil); st != http.StatusNotFound {
			t.Fatalf("socket of unknown name %d: %d, want 404", i, st)
		}
	}
	st, j, h := e.do("GET", "/queue/ghost-x/ws?ticket=x", "", nil)
	if st != http.StatusTooManyRequests || j["error"] != "rate_limited" || h.Get("Retry-After") == "" {
		t.Fatalf("socket beyond the budget: %d %v (Retry-After %q), want 429 rate_limited", st, j, h.Get("Retry-After"))
	}
	if st, _, _ := e.do("GET", "/queue/ghost-y/status", "", nil); st != http.StatusTooManyRequests {
		t.Fatalf("the API after the socket spent the budget: %d, want 429", st)
	}
}
