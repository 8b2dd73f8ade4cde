package api

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// visitorFrom is a client whose connections leave from the loopback
// address ip, so that the server sees a client of its own.
func visitorFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// joinFrom posts a join (with body, when not empty) through client.
func (e *env) joinFrom(t *testing.T, client *http.Client, slug, body string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	res, err := client.Post(e.srv.URL+"/queue/"+slug+"/join", "application/json", rd)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m, res.Header
}

// TestAddressBudgetFlood: one address joins as fast as it can; it gets its
// burst of numbers and then 429 with Retry-After, never a silent drop,
// while 50 other addresses each get their number. Its budget comes back
// at the configured rate.
func TestAddressBudgetFlood(t *testing.T) {
	clock := newStillClock()
	w := newWorld(t, memlog.New(), clock)
	id, _ := w.createRoom("flood", 6000)
	site := w.patchSite(id, func(s map[string]any) {
		s["addressBudget"] = map[string]any{"perMinute": 6, "burst": 5}
	})
	if b := site["addressBudget"].(map[string]any); b["perMinute"] != 6.0 || b["burst"] != 5.0 {
		t.Fatalf("site answer: addressBudget %v, want {perMinute: 6, burst: 5}", b)
	}

	flooder := visitorFrom(t, "127.0.0.2")
	numbers := map[float64]bool{}
	const flood = 200
	refused := 0
	for i := range flood {
		st, m, h := w.joinFrom(t, flooder, "flood", "")
		switch st {
		case http.StatusOK:
			numbers[m["number"].(float64)] = true
		case http.StatusTooManyRequests:
			refused++
			if m["error"] != "rate_limited" || m["message"] == "" || h.Get("Retry-After") != "10" {
				t.Fatalf("join %d: got %v Retry-After %q, want rate_limited and 10 s (6 a minute)", i, m, h.Get("Retry-After"))
			}
		default:
			t.Fatalf("join %d: got %d %v", i, st, m)
		}
	}
	if len(numbers) != 5 || refused != flood-5 {
		t.Fatalf("flooder: got %d numbers and %d refusals, want its burst of 5 and %d", len(numbers), refused, flood-5)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := []string{}
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ip := "127.0.1." + strconv.Itoa(i+1)
			st, m, _ := w.joinFrom(t, visitorFrom(t, ip), "flood", "")
			mu.Lock()
			defer mu.Unlock()
			if st != http.StatusOK {
				failures = append(failures, ip+": "+strconv.Itoa(st))
				return
			}
			numbers[m["number"].(float64)] = true
		}()
	}
	wg.Wait()
	if len(failures) > 0 || len(numbers) != 55 {
		t.Fatalf("visitors: %d distinct numbers in all, failures %v; want 55 and none", len(numbers), failures)
	}

	// The gateway link takes no number over budget either: it sends the
	// flooder into the waiting room without one, and a fresh address to
	// the shop.
	enter := func(ip string) string {
		t.Helper()
		c := visitorFrom(t, ip)
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, err := c.Get(w.srv.URL + "/queue/flood/enter")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound {
			t.Fatalf("enter from %s: got %d, want 302", ip, res.StatusCode)
		}
		return res.Header.Get("Location")
	}
	if got := enter("127.0.0.2"); got != "http://queue.test/queue/flood" {
		t.Fatalf("flooder's enter: got %q, want the waiting room without a ticket", got)
	}
	if got := enter("127.0.2.1"); !strings.HasPrefix(got, "https://shop.example.com/tickets?aditus_queue_token=") {
		t.Fatalf("fresh address's enter: got %q, want the shop with a token", got)
	}

	// Nor does an app's first visit in JSON.
	req, _ := http.NewRequest("GET", w.srv.URL+"/queue/flood", nil)
	req.Header.Set("Accept", "application/json")
	res, err := flooder.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var app map[string]any
	_ = json.NewDecoder(res.Body).Decode(&app)
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || app["error"] != "rate_limited" || res.Header.Get("Retry-After") == "" {
		t.Fatalf("flooder's JSON visit: got %d %v, want 429 rate_limited with Retry-After", res.StatusCode, app)
	}

	clock.Advance(10 * time.Second)
	if st, m, _ := w.joinFrom(t, flooder, "flood", ""); st != http.StatusOK {
		t.Fatalf("flooder after its wait: got %d %v, want a number", st, m)
	}
	if st, _, _ := w.joinFrom(t, flooder, "flood", ""); st != http.StatusTooManyRequests {
		t.Fatalf("flooder's second join after one token's wait: got %d, want 429", st)
	}
	if got := refusals(t, w.env.registry, "refused"); got != flood-5+3 {
		t.Fatalf("refusals counted: got %v, want %d (the joins, the gateway's and the app's)", got, flood-5+3)
	}
}

// TestAddressBudgetHarderWork: with proof of work on, an address over its
// budget is asked for more bits rather than refused; a solution of the
// room's ordinary bits no longer buys it a number.
func TestAddressBudgetHarderWork(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, _ := w.createRoom("pow", 6000)
	w.patchSite(id, func(s map[string]any) {
		s["addressBudget"] = map[string]any{"perMinute": 1, "burst": 2}
		s["pow"] = map[string]any{"enabled": true, "bits": 8}
	})
	flooder := visitorFrom(t, "127.0.0.3")
	solve := func(m map[string]any, bits int) string {
		t.Helper()
		p := m["pow"].(map[string]any)
		ch := checkChallenge(t, "428", p, bits)
		b, _ := json.Marshal(map[string]any{"pow": map[string]any{"challenge": ch, "nonce": room.SolvePow(ch, bits)}})
		return string(b)
	}
	join := func(want int, body string) map[string]any {
		t.Helper()
		st, m, _ := w.joinFrom(t, flooder, "pow", body)
		if st != want {
			t.Fatalf("join: got %d %v, want %d", st, m, want)
		}
		return m
	}
	for range 2 {
		join(http.StatusOK, solve(join(http.StatusPreconditionRequired, ""), 8))
	}
	// Over budget: 9 bits now, and an 8-bit solution is refused.
	m := join(http.StatusPreconditionRequired, "")
	checkChallenge(t, "over budget", m["pow"].(map[string]any), 9)
	easy := solveFresh(t, w, 8)
	m = join(http.StatusPreconditionRequired, easy)
	join(http.StatusOK, solve(m, 9))
	// Another address is still asked for the room's bits.
	st, m, _ := w.joinFrom(t, visitorFrom(t, "127.0.0.4"), "pow", "")
	if st != http.StatusPreconditionRequired {
		t.Fatalf("other address: got %d %v", st, m)
	}
	checkChallenge(t, "other address", m["pow"].(map[string]any), 8)
	if got := refusals(t, w.env.registry, "harder"); got < 2 {
		t.Fatalf("harder challenges counted: got %v, want at least 2", got)
	}
}

// solveFresh solves an 8-bit challenge from GET /pow asked by another
// address, whose budget is whole.
func solveFresh(t *testing.T, w *world, bits int) string {
	t.Helper()
	res, err := visitorFrom(t, "127.0.0.5").Get(w.srv.URL + "/queue/pow/pow")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p map[string]any
	_ = json.NewDecoder(res.Body).Decode(&p)
	ch := checkChallenge(t, "GET /pow", p, bits)
	b, _ := json.Marshal(map[string]any{"pow": map[string]any{"challenge": ch, "nonce": room.SolvePow(ch, bits)}})
	return string(b)
}

// TestAddressBudgetInvalid: each budget field out of range is a 422 that
// names it, and nothing changes.
func TestAddressBudgetInvalid(t *testing.T) {
	e := newEnv(t)
	id, _ := e.createRoom("budget", 60)
	for _, tc := range []struct {
		name   string
		budget map[string]any
		field  string
	}{
		{"rate below 1", map[string]any{"perMinute": 0.5, "burst": 5}, "addressBudget.perMinute"},
		{"rate above 6000000", map[string]any{"perMinute": 6000001, "burst": 5}, "addressBudget.perMinute"},
		{"burst negative", map[string]any{"perMinute": 10, "burst": -1}, "addressBudget.burst"},
		{"burst above 10000000", map[string]any{"perMinute": 10, "burst": 10000001}, "addressBudget.burst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil)
			site["addressBudget"] = tc.budget
			st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, site)
			if st != http.StatusUnprocessableEntity || m["field"] != tc.field || m["error"] != "invalid" {
				t.Fatalf("got %d %v, want 422 naming %s", st, m, tc.field)
			}
		})
	}
	_, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil)
	b := site["addressBudget"].(map[string]any)
	if b["perMinute"] != float64(room.DefaultBudgetPerMinute) || b["burst"] != float64(room.DefaultBudgetBurst) {
		t.Fatalf("after refusals: addressBudget %v, want the defaults", b)
	}
}

// TestAddressBudgetSimultaneousJoins: joins from one address over its
// budget that arrive together, each with work of the room's bits, do not
// all get numbers: the burst does, the others are asked for harder work.
func TestAddressBudgetSimultaneousJoins(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, _ := w.createRoom("pow", 6000)
	w.patchSite(id, func(s map[string]any) {
		s["addressBudget"] = map[string]any{"perMinute": 1, "burst": 2}
		s["pow"] = map[string]any{"enabled": true, "bits": 8}
	})
	const n = 30
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = solveFresh(t, w, 8)
	}
	flooder := visitorFrom(t, "127.0.0.3")
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]int{}
	start := make(chan struct{})
	for _, body := range bodies {
		wg.Go(func() {
			<-start
			res, err := flooder.Post(w.srv.URL+"/queue/pow/join", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			mu.Lock()
			got[res.StatusCode]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if got[http.StatusOK] != 2 || got[http.StatusPreconditionRequired] != n-2 {
		t.Fatalf("%d simultaneous joins over a burst of 2: %v, want 2 × 200 and the rest 428", n, got)
	}
}
