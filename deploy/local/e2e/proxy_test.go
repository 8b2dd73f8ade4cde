package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// These tests run `aditus-queue proxy` (and `serve` members) as real
// processes in front of an upstream in the test, all on loopback.

// startProxyProc runs `aditus-queue proxy` with config src and waits until
// it answers.
func startProxyProc(t *testing.T, dir, src string, extra ...string) (*testbin.Proc, string) {
	t.Helper()
	cfg := filepath.Join(dir, fmt.Sprintf("proxy-%d.hcl", time.Now().UnixNano()))
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testbin.FreeAddr(t)
	args := append([]string{"proxy", "--config", cfg, "--addr", addr, "--data-dir", filepath.Join(dir, "data")}, extra...)
	p := testbin.Start(t, args...)
	base := "http://" + addr
	up := testwait.Poll(30*time.Second, 50*time.Millisecond, func() bool {
		if p.Cmd.ProcessState != nil {
			t.Fatalf("proxy exited:\n%s", p.Output())
		}
		res, err := http.Get(base + "/")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	if !up {
		t.Fatalf("proxy did not answer:\n%s", p.Output())
	}
	return p, base
}

// shop is the upstream: it counts the distinct visitors inside at once
// (from a visitor's first request until their /checkout, which answers
// the release header) and the highest count it ever saw.
type shop struct {
	*httptest.Server
	mu       sync.Mutex
	inside   map[string]bool
	max      int
	admitted []string // visitors in the order of their first request
}

func newShop(t *testing.T) *shop {
	s := &shop{inside: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("X-Test-Visitor")
		s.mu.Lock()
		if v != "" && !s.inside[v] && r.URL.Path != "/checkout" {
			s.inside[v] = true
			s.admitted = append(s.admitted, v)
			s.max = max(s.max, len(s.inside))
		}
		if r.URL.Path == "/checkout" {
			delete(s.inside, v)
			w.Header().Set("Aditus-Queue-Release", "1")
		}
		s.mu.Unlock()
		fmt.Fprintf(w, "shop page %s", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *shop) addr() string { return strings.TrimPrefix(s.URL, "http://") }

// visitor is a browser: its own cookie jar, a name for the shop's count.
type visitor struct {
	name string
	c    *http.Client
}

func newVisitor(name string) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{name: name, c: &http.Client{Jar: jar, Timeout: 20 * time.Second}}
}

func (v *visitor) get(t *testing.T, base, host, path string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Host = host
	req.Header.Set("X-Test-Visitor", v.name)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	// The jar keys cookies by the URL's host; the proxy's Host header
	// names the site. Keep one jar per site by using the site in the URL.
	res, err := v.c.Do(req)
	if err != nil {
		t.Fatalf("%s GET %s%s: %v", v.name, host, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

const capacityConfig = `
host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = %d
      on_store_error = "wait"
      session        = "%s"
      refresh        = "1s"
    }
  }
}
`

// TestProxyThreeInsideOfTwenty lets 20 visitors at a room of 3: the shop
// never counts more than 3 inside, and visitors go in in the order they
// arrived.
func TestProxyThreeInsideOfTwenty(t *testing.T) {
	s := newShop(t)
	_, base := startProxyProc(t, t.TempDir(), fmt.Sprintf(capacityConfig, s.addr(), 3, "1m"))
	const n = 20
	var wg sync.WaitGroup
	admittedAt := make([]time.Time, n)
	for i := 0; i < n; i++ {
		v := newVisitor(fmt.Sprintf("v%02d", i))
		// Arrival order is well defined: each visitor's first request is
		// answered before the next visitor arrives.
		first := make(chan struct{})
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var st int
			var body string
			var hdr http.Header
			arrived := sync.OnceFunc(func() { close(first) })
			// The visitor asks again every 100 ms until let in, as long as
			// each answer is a proper waiting page.
			done := testwait.Poll(90*time.Second, 100*time.Millisecond, func() bool {
				st, body, hdr = v.get(t, base, "shop.test", "/")
				arrived()
				return st != 503 || hdr.Get("Retry-After") != "1" || hdr.Get("Cache-Control") != "no-store" || !strings.Contains(body, "waiting in all")
			})
			switch {
			case !done:
				t.Errorf("%s never admitted", v.name)
				return
			case st != 200:
				t.Errorf("%s: waiting answer %d %v %q", v.name, st, hdr, body)
				return
			}
			admittedAt[i] = time.Now()
			for k := 0; k < 3; k++ {
				if st, _, _ := v.get(t, base, "shop.test", fmt.Sprintf("/item/%d", k)); st != 200 {
					t.Errorf("%s inside got %d", v.name, st)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if st, _, hdr := v.get(t, base, "shop.test", "/checkout"); st != 200 || hdr.Get("Aditus-Queue-Release") != "" {
				t.Errorf("%s checkout: %d, release header leaked: %q", v.name, st, hdr.Get("Aditus-Queue-Release"))
			}
		}(i)
		<-first
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max > 3 || s.max < 3 {
		t.Fatalf("the shop saw at most %d visitors inside at once, want exactly 3", s.max)
	}
	if len(s.admitted) != n {
		t.Fatalf("%d visitors reached the shop, want %d", len(s.admitted), n)
	}
	// First come first served: a later visitor never goes in clearly
	// before an earlier one (slots freed together go to the first of the
	// line in whatever order they check, within one poll).
	for i := 3; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if admittedAt[j].Add(300 * time.Millisecond).Before(admittedAt[i]) {
				t.Errorf("v%02d went in %v before v%02d, who arrived earlier", j, admittedAt[i].Sub(admittedAt[j]), i)
			}
		}
	}
}

// cookieOf returns the value and name of the room cookie in h.
func cookieOf(t *testing.T, h http.Header) (name, value string) {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if strings.HasPrefix(c.Name, "aq_") {
			return c.Name, c.Value
		}
	}
	t.Fatalf("no room cookie in %v", h)
	return "", ""
}

// roomCookie is the room cookie set in h as name=value, or "".
func roomCookie(h http.Header) string {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if strings.HasPrefix(c.Name, "aq_") {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

// comeBack sends one visitor to shop.test at base for each of wants: a
// first request, then the return with its cookie that makes the place real
// (a slot holder's, a session), which must be answered that status. It
// returns their cookies, the return's own where it set one.
func comeBack(t *testing.T, base string, wants ...int) []string {
	t.Helper()
	var cookies []string
	for i, want := range wants {
		_, _, h := raw(t, base, "shop.test", "/", "")
		n, v := cookieOf(t, h)
		st, _, h := raw(t, base, "shop.test", "/", n+"="+v)
		if st != want {
			t.Fatalf("visitor %d back: %d, want %d", i, st, want)
		}
		if h.Get("Set-Cookie") != "" {
			n, v = cookieOf(t, h)
		}
		cookies = append(cookies, n+"="+v)
	}
	return cookies
}

func raw(t *testing.T, base, host, path, cookie string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Host = host
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// TestProxyRoomRules runs one proxy with rooms of one slot and checks
// session expiry, the release header, the custom page, a cookie moved to
// another room or host, and the bypass list.
func TestProxyRoomRules(t *testing.T) {
	s := newShop(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte(`<meta http-equiv="refresh" content="{refresh}">pos={position} of={waiting} every={refresh}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`
host "expiry.test" {
  location "/" {
    upstream "%[1]s" {}
    waiting_room {
      active         = 1
      on_store_error = "wait"
      session        = "2s"
      refresh        = "1s"
      page           = "%[2]s"
    }
    rule "robots" {
      bypass {
        user_agents = ["Googlebot"]
        unverified  = true        # the test's crawler calls from loopback
        paths       = ["/healthz"]
      }
    }
  }
  location "/other/" {
    upstream "%[1]s" {}
    waiting_room {
      name           = "other"
      active         = 1
      on_store_error = "wait"
    }
  }
}
host "release.test" {
  location "/" {
    upstream "%[1]s" {}
    waiting_room {
      active         = 1
      on_store_error = "wait"
      refresh        = "3s"
    }
  }
}
`, s.addr(), page)
	_, base := startProxyProc(t, dir, src)

	// Session expiry: a goes quiet, b gets the slot once a's session ends.
	// The exact length of a session is actors/capacity's TestSessionExpiry,
	// on a fake clock; here a real proxy keeps it, so what a check may
	// expect depends on how much real time has passed since a's last
	// request: a check that came too late for its premise is skipped.
	const session = 2 * time.Second
	aAt := time.Now()
	st, _, ha := raw(t, base, "expiry.test", "/", "")
	if st != 200 {
		t.Fatalf("first visitor: %d", st)
	}
	na, va := cookieOf(t, ha)
	// b's first request has a provisional place; b's return counts it.
	st, body, hb := raw(t, base, "expiry.test", "/", "")
	if st != 503 || body != `<meta http-equiv="refresh" content="1">pos=about 0 ahead of=1 every=1` {
		t.Fatalf("second visitor: %d %q", st, body)
	}
	_, vb := cookieOf(t, hb)
	if st, body, _ := raw(t, base, "expiry.test", "/", na+"="+vb); st != 503 || body != `<meta http-equiv="refresh" content="1">pos=1 of=1 every=1` {
		t.Fatalf("second visitor back: %d %q", st, body)
	}
	// Bypass: a crawler and a health probe pass without slot or cookie.
	for _, h := range [][]string{{"User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1)"}, nil} {
		path := "/"
		if h == nil {
			path = "/healthz"
		}
		st, _, hh := raw(t, base, "expiry.test", path, "", h...)
		if st != 200 || hh.Get("Set-Cookie") != "" {
			t.Fatalf("bypass %v %s: %d, cookie %q", h, path, st, hh.Get("Set-Cookie"))
		}
	}
	// A cookie moved to another room of the host is worthless.
	_, _, ho := raw(t, base, "expiry.test", "/other/", "")
	no, _ := cookieOf(t, ho)
	if st, _, _ := raw(t, base, "expiry.test", "/other/", no+"="+va); st != 503 {
		t.Fatalf("cookie moved to another room: %d, want a new visitor waiting", st)
	}
	if st, body, _ := raw(t, base, "expiry.test", "/", na+"="+vb); (st != 503 || !strings.Contains(body, "pos=1")) && time.Since(aAt) < session {
		t.Fatalf("b while a's session runs: %d %q", st, body)
	}
	if since := time.Since(aAt); since < session {
		if st, _, _ := raw(t, base, "expiry.test", "/", na+"="+va); st != 200 {
			t.Fatalf("a inside: %d", st)
		}
	} else {
		t.Logf("a's renewal not checked: %v passed since a's last request", since)
	}
	var admitted http.Header
	testwait.UntilEvery(t, 15*time.Second, 300*time.Millisecond, "b admitted after a's session ended", func() bool {
		st, _, h := raw(t, base, "expiry.test", "/", na+"="+vb)
		admitted = h
		return st == 200
	})
	cookieOf(t, admitted) // admitted with a cookie
	// a's cookie has ended: a is a new visitor at the end of the line.
	if st, body, _ := raw(t, base, "expiry.test", "/", na+"="+va); st != 503 || !strings.Contains(body, "pos=1 of=1") {
		t.Fatalf("a after expiry: %d %q", st, body)
	}

	// Release: c holds release.test's slot, d waits; c's checkout frees the
	// slot at once (well inside the 5 minute session) and c's cookie stops
	// working.
	_, _, hc := raw(t, base, "release.test", "/", "")
	nr, vc := cookieOf(t, hc)
	st, _, hd := raw(t, base, "release.test", "/", "")
	if st != 503 {
		t.Fatalf("d: %d", st)
	}
	_, vd := cookieOf(t, hd)
	// The cookie of release.test moved to expiry.test (another host).
	if st, _, _ := raw(t, base, "expiry.test", "/", na+"="+vc); st == 200 {
		t.Fatalf("cookie moved to another host admitted")
	}
	st, _, hr := raw(t, base, "release.test", "/checkout", nr+"="+vc, "X-Test-Visitor", "c")
	if st != 200 || hr.Get("Aditus-Queue-Release") != "" {
		t.Fatalf("checkout: %d, header %q", st, hr.Get("Aditus-Queue-Release"))
	}
	if st, _, _ := raw(t, base, "release.test", "/", nr+"="+vd); st != 200 {
		t.Fatalf("d after c's release: %d, want admitted at once", st)
	}
	if st, _, _ := raw(t, base, "release.test", "/", nr+"="+vc); st != 503 {
		t.Fatalf("c's old cookie after release: %d, want waiting", st)
	}
}

// TestProxyClusterSharesOneLine runs one member and two proxy front nodes:
// both proxies share the room's slots, its line and its cookie key. Then it
// stops the member behind the running proxies: on_store_error = "admit"
// lets new visitors through, "wait" keeps them on the page with "…", and
// visitors already inside keep going on their cookies alone.
func TestProxyClusterSharesOneLine(t *testing.T) {
	s := newShop(t)
	dir := t.TempDir()
	key := strings.Repeat("ab", 32)
	health := testbin.FreeAddr(t)
	member := testbin.Start(t, "serve", "--roles", "actor", "--addr", testbin.FreeAddr(t), "--data-dir", filepath.Join(dir, "member"),
		"--admin-token", "cluster-admin-token-long-enough", "--master-key", key, "--cluster-health", health, "--peers", health)
	src := fmt.Sprintf(`
host "wait.test" {
  location "/" {
    upstream "%[1]s" {}
    waiting_room {
      active         = 2
      on_store_error = "wait"
      refresh        = "2s"
    }
  }
}
host "admit.test" {
  location "/" {
    upstream "%[1]s" {}
    waiting_room {
      active         = 1
      on_store_error = "admit"
    }
  }
}
`, s.addr())
	_, p1 := startProxyProc(t, filepath.Join(dir), src, "--peers", health, "--master-key", key)
	_, p2 := startProxyProc(t, filepath.Join(dir), src, "--peers", health, "--master-key", key)

	var cookies []string
	for i, tc := range []struct {
		base   string
		status int
		body   string
	}{
		{p1, 200, ""}, {p2, 200, ""},
		{p1, 503, `id="position">1<`}, {p2, 503, `id="position">2<`},
	} {
		var st int
		var cookie, body string
		// The member may still be starting: the visitor comes back every
		// 200 ms until its place is counted.
		placed := testwait.Poll(30*time.Second, 200*time.Millisecond, func() bool {
			// A first request, then the return that counts its place
			// (and gives a slot holder the whole session).
			var h http.Header
			st, _, h = raw(t, tc.base, "wait.test", "/", "")
			cookie, body = roomCookie(h), ""
			if cookie != "" {
				st, body, h = raw(t, tc.base, "wait.test", "/", cookie)
				if c := roomCookie(h); c != "" {
					cookie = c
				}
			}
			return cookie != "" && st == tc.status && strings.Contains(body, tc.body) && (st == 200 || strings.Contains(body, `id="waiting">`+fmt.Sprint(i-1)+`<`))
		})
		if !placed {
			t.Fatalf("visitor %d: %d %q", i, st, body)
		}
		cookies = append(cookies, cookie)
	}
	// One key: a visitor let in by one proxy is inside on the other.
	if st, _, _ := raw(t, p2, "wait.test", "/", cookies[0]); st != 200 {
		t.Fatalf("visitor of proxy 1 on proxy 2: %d", st)
	}
	// Both proxies know admit.test's key before the store goes.
	for _, p := range []string{p1, p2} {
		if st, _, _ := raw(t, p, "admit.test", "/", ""); st != 200 && st != 503 {
			t.Fatalf("admit.test: %d", st)
		}
	}

	member.Kill()
	// The proxy finds the store gone at its next call to it.
	var st int
	var body string
	storeDown := testwait.Poll(10*time.Second, 50*time.Millisecond, func() bool {
		st, body, _ = raw(t, p1, "wait.test", "/", "")
		return st == 503 && strings.Contains(body, `id="position">…<`) && strings.Contains(body, `id="waiting">…<`)
	})
	if !storeDown {
		t.Fatalf("wait with the store down: %d %q", st, body)
	}
	if st, body, _ := raw(t, p2, "admit.test", "/", ""); st != 200 || !strings.Contains(body, "shop page") {
		t.Fatalf("admit with the store down: %d %q", st, body)
	}
	if st, _, _ := raw(t, p1, "wait.test", "/", cookies[1]); st != 200 {
		t.Fatalf("a visitor inside, with the store down: %d", st)
	}
}

// TestProxySeedExamples runs every configuration example of seed 004 as
// written, with only the upstream address (and the files it names) moved
// to the test's.
func TestProxySeedExamples(t *testing.T) {
	s := newShop(t)
	for _, tc := range []struct {
		file string
		path string
		want string
		room bool
	}{
		{"seed004_basic.hcl", "/", "shop page /", true},
		{"seed004_page.hcl", "/", "shop page /", true},
		{"seed004_page.hcl", "/waiting/style.css", "body{color:#123}", false},
		{"seed004_rule.hcl", "/checkout/cart", "shop page /checkout/cart", true},
		{"seed004_rule.hcl", "/products", "shop page /products", false},
	} {
		t.Run(tc.file+tc.path, func(t *testing.T) {
			dir := t.TempDir()
			b, err := os.ReadFile(filepath.Join("transport", "proxy", "testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			src := strings.ReplaceAll(string(b), "shop:3000", s.addr())
			src = strings.ReplaceAll(src, "/etc/proksi/waiting.html", filepath.Join(dir, "waiting.html"))
			src = strings.ReplaceAll(src, "/srv/waiting", filepath.Join(dir, "static"))
			_ = os.MkdirAll(filepath.Join(dir, "static"), 0o755)
			_ = os.WriteFile(filepath.Join(dir, "static", "style.css"), []byte("body{color:#123}"), 0o644)
			_ = os.WriteFile(filepath.Join(dir, "waiting.html"), []byte("<p>{position} of {waiting}</p>"), 0o644)
			_, base := startProxyProc(t, dir, src)
			st, body, h := raw(t, base, "shop.example.com", tc.path, "")
			if st != 200 || body != tc.want {
				t.Fatalf("GET %s: %d %q, want %q", tc.path, st, body, tc.want)
			}
			if got := h.Get("Set-Cookie") != ""; got != tc.room {
				t.Fatalf("GET %s: room cookie set %v, want %v", tc.path, got, tc.room)
			}
		})
	}
}

// TestServeProxyEnforcesRateRoom runs `serve --proxy-config` with a block
// naming a rate room: the proxy sends visitors without a token to the
// room's gateway link, turns a returning visitor's token into a cookie, and
// lets the cookie through; a token signed with another secret is refused.
func TestServeProxyEnforcesRateRoom(t *testing.T) {
	s := newShop(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "proxy.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      room           = "launch"
      on_store_error = "wait"
    }
  }
}
`, s.addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	const admin = "rate-proxy-admin-token-long-enough"
	paddr := testbin.FreeAddr(t)
	srv := startServer(t, filepath.Join(dir, "data"), testbin.FreeAddr(t), "--admin-token", admin, "--proxy-config", cfg, "--proxy-addr", paddr)
	st, created := srv.call("POST", "/api/admin/queue/sites", admin, map[string]any{
		"slug": "launch", "name": "Launch", "targetUrl": "http://shop.test/", "ratePerMinute": 60, "active": true})
	if st != 201 {
		t.Fatalf("create: %d %v", st, created)
	}
	secret := []byte(created["secret"].(string))
	base := "http://" + paddr
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 20 * time.Second}
	get := func(path, cookie string) *http.Response {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Host = "shop.test"
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := get("/tickets?x=1", "")
	want := srv.base + "/queue/launch/enter?return=" + url.QueryEscape("http://shop.test/tickets?x=1")
	if res.StatusCode != 302 || res.Header.Get("Location") != want {
		t.Fatalf("without a token: %d %q, want 302 to %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	tok, _, err := token.Mint(secret, "launch", 1, false, time.Now(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res = get("/tickets?aditus_queue_token="+tok, "")
	if res.StatusCode != 302 || res.Header.Get("Location") != "/tickets" || !strings.Contains(res.Header.Get("Set-Cookie"), tok) {
		t.Fatalf("returning with a token: %d %v", res.StatusCode, res.Header)
	}
	if res := get("/tickets", "aditus_queue="+tok); res.StatusCode != 200 {
		t.Fatalf("with the token cookie: %d", res.StatusCode)
	}
	forged, _, _ := token.Mint([]byte("another secret of the same length!!"), "launch", 1, false, time.Now(), 10*time.Minute)
	if res := get("/tickets", "aditus_queue="+forged); res.StatusCode != 302 {
		t.Fatalf("forged token: %d, want a redirect to the room", res.StatusCode)
	}
}

// TestProxyRestartKeepsPlaces kills a proxy running alone on its embedded
// log and starts it again on the same data directory: the slot holders are
// still counted (a newcomer waits behind the line) and the waiter keeps the
// first place.
func TestProxyRestartKeepsPlaces(t *testing.T) {
	s := newShop(t)
	dir := t.TempDir()
	src := fmt.Sprintf(capacityConfig, s.addr(), 2, "5m")
	p, base := startProxyProc(t, dir, src)
	cookies := comeBack(t, base, 200, 200, 503)
	p.Kill() // SIGKILL
	_, base = startProxyProc(t, dir, src)
	st, body, h := raw(t, base, "shop.test", "/", "")
	if st != 503 || !strings.Contains(body, `id="position">about 1 ahead<`) {
		t.Fatalf("newcomer after the restart: %d, want 503 about 1 ahead:\n%s", st, body)
	}
	n, v := cookieOf(t, h)
	if st, body, _ := raw(t, base, "shop.test", "/", n+"="+v); st != 503 || !strings.Contains(body, `id="position">2<`) {
		t.Fatalf("newcomer back after the restart: %d, want 503 at place 2:\n%s", st, body)
	}
	if st, body, _ := raw(t, base, "shop.test", "/", cookies[2]); st != 503 || !strings.Contains(body, `id="position">1<`) {
		t.Fatalf("waiter after the restart: %d, want 503 at place 1:\n%s", st, body)
	}
	for i := 0; i < 2; i++ {
		if st, _, _ := raw(t, base, "shop.test", "/", cookies[i]); st != 200 {
			t.Fatalf("slot holder %d after the restart: %d", i, st)
		}
	}
}

func TestProxyHasTheOperationsListener(t *testing.T) {
	s := newShop(t)
	ops := testbin.FreeAddr(t)
	startProxyProc(t, t.TempDir(), fmt.Sprintf(capacityConfig, s.addr(), 3, "1m"), "--ops-addr", ops)
	st, body := testbin.Get(t, "http://"+ops+"/metrics")
	if st != http.StatusOK || !strings.Contains(body, "\naditus_queue_rooms_unavailable ") || !strings.Contains(body, "\ngo_goroutines ") {
		t.Fatalf("proxy's /metrics: %d, want the node's and the process's metrics", st)
	}
	if st, body := testbin.Get(t, "http://"+ops+"/queue/healthz"); st != http.StatusOK || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("proxy's healthz: %d %q", st, body)
	}
}
