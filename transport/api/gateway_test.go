package api

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/token"
)

// get fetches path with the given Accept header, following no redirect.
func (e *env) get(path, accept string) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// The gateway link of a room without a target URL has nowhere to forward
// anyone: it answers a clear 409 (an HTML page for browsers, the JSON error
// for API clients) and issues no number, unless a valid return URL names a
// page of the room's domains.
func TestEnterWithoutTargetURL(t *testing.T) {
	e := newEnv(t)
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{
		"slug": "no-target", "name": "No target", "domains": []string{"shop.example.com"}, "ratePerMinute": 600})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, m)
	}
	secret := m["secret"].(string)

	for _, ret := range []string{"", "?return=" + url.QueryEscape("https://evil.example/"), "?return=not-a-url"} {
		res, body := e.get("/queue/no-target/enter"+ret, browserAccept)
		if res.StatusCode != http.StatusConflict || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			res.Header.Get("Location") != "" || !strings.Contains(body, "This link leads nowhere yet") {
			t.Fatalf("browser, enter%s: %d %v\n%s", ret, res.StatusCode, res.Header, body)
		}
		assetsResolve(t, e, "/queue/no-target/enter", body)
		for _, accept := range []string{"", "application/json", "*/*"} {
			res, body := e.get("/queue/no-target/enter"+ret, accept)
			var je struct{ Error, Message string }
			if res.StatusCode != http.StatusConflict || json.Unmarshal([]byte(body), &je) != nil || je.Error != "no_target" || je.Message == "" {
				t.Fatalf("Accept %q, enter%s: %d %s", accept, ret, res.StatusCode, body)
			}
		}
	}
	res, _ := e.get("/queue/no-target/enter", "text/html")
	if res.Header.Get("Content-Language") != "en" {
		t.Fatalf("page language %q", res.Header.Get("Content-Language"))
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/queue/no-target/enter", nil)
	req.Header.Set("Accept", browserAccept)
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	if res, err := http.DefaultTransport.RoundTrip(req); err != nil || res.StatusCode != http.StatusConflict {
		t.Fatalf("German browser: %v %v", res, err)
	} else if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), "Dieser Link führt noch nirgendwohin") {
		t.Fatalf("German page: %s", b)
	}

	// A return URL of the room's domains is the target: the first visitor
	// goes there with a token, and it holds number 1 — the refused
	// requests above issued none.
	ret := "https://shop.example.com/event/7?seat=A"
	res, _ = e.get("/queue/no-target/enter?return="+url.QueryEscape(ret), browserAccept)
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || loc.Host != "shop.example.com" || loc.Path != "/event/7" || loc.Query().Get("seat") != "A" {
		t.Fatalf("enter with a valid return: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	c, err := token.Verify([]byte(secret), "no-target", loc.Query().Get("aditus_queue_token"), newStillClock().Now())
	if err != nil || c.Number != 1 {
		t.Fatalf("token %+v, %v; want number 1", c, err)
	}
}

var (
	linkHref   = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)">`)
	scriptSrc  = regexp.MustCompile(`<script (?:type="module" |nomodule )?src="([^"]+)"`)
	roomData   = regexp.MustCompile(`(?s)<script type="application/json" id="aq-room">(.*?)</script>`)
	absoluteTo = regexp.MustCompile(`(?i)(?:src|href)="(?:https?:)?//`)
)

// assetsResolve checks that every asset the page at path links resolves on
// the origin the page was fetched from and serves the right type.
func assetsResolve(t *testing.T, e *env, path, body string) []string {
	t.Helper()
	if absoluteTo.MatchString(body) {
		t.Fatalf("%s links an absolute URL:\n%s", path, body)
	}
	page, _ := url.Parse(e.srv.URL + path)
	var links []string
	for _, m := range linkHref.FindAllStringSubmatch(body, -1) {
		links = append(links, html.UnescapeString(m[1]))
	}
	for _, m := range scriptSrc.FindAllStringSubmatch(body, -1) {
		links = append(links, html.UnescapeString(m[1]))
	}
	if m := roomData.FindStringSubmatch(body); m != nil {
		var d struct{ Base, WorkerURL string }
		if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
			t.Fatalf("page data: %v", err)
		}
		if d.Base != "" {
			t.Fatalf("%s calls the API at %q, not on its own origin", path, d.Base)
		}
		links = append(links, d.WorkerURL)
	}
	if len(links) == 0 || !strings.Contains(links[0], ".css") {
		t.Fatalf("%s links no stylesheet:\n%s", path, body)
	}
	for _, l := range links {
		u, err := page.Parse(l)
		if err != nil || u.Host != page.Host {
			t.Fatalf("%s: asset %q resolves to %v (%v), not on %s", path, l, u, err, page.Host)
		}
		res, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ct := res.Header.Get("Content-Type")
		if res.StatusCode != http.StatusOK || !(strings.HasSuffix(u.Path, ".css") && strings.HasPrefix(ct, "text/css") ||
			strings.HasSuffix(u.Path, ".js") && strings.HasPrefix(ct, "text/javascript")) {
			t.Fatalf("%s: asset %s: %d %s", path, u, res.StatusCode, ct)
		}
	}
	return links
}

// The hosted page works however it is reached: this server's public URL is
// http://queue.test, where nothing answers, and the page is fetched from
// 127.0.0.1:<port>; its stylesheet, scripts and the proof-of-work worker
// all resolve there, and its API calls go there too.
func TestPageAssetsOnItsOwnOrigin(t *testing.T) {
	e := newEnv(t)
	id, _ := e.createRoom("anywhere", 60)
	st, _, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, map[string]any{"name": "Anywhere", "ratePerMinute": 60, "active": true, "pow": map[string]any{"enabled": true, "bits": 8}})
	if st != http.StatusOK {
		t.Fatalf("enable pow: %d", st)
	}
	res, body := e.get("/queue/anywhere", browserAccept)
	if res.StatusCode != http.StatusOK || strings.Contains(body, "queue.test") {
		t.Fatalf("page: %d\n%s", res.StatusCode, body)
	}
	links := assetsResolve(t, e, "/queue/anywhere", body)
	if len(links) != 4 {
		t.Fatalf("page links %v, want the stylesheet, the module, its fallback and the worker", links)
	}
	res, body = e.get("/queue/nope", browserAccept)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("missing room: %d", res.StatusCode)
	}
	assetsResolve(t, e, "/queue/nope", body)
}

// The hosted page and the gateway's redirects carry the visitor's ticket
// in their address: the page may be framed only by its own origin and the
// room's domains (a header: a meta element cannot say it), and neither is
// ever sent on as a referrer.
func TestPageHeadersGuardTheTicket(t *testing.T) {
	e := newEnv(t)
	e.createRoom("framed", 1)
	_, j, _ := e.do("POST", "/queue/framed/join", "", nil)
	ticket, _ := j["ticket"].(string)
	st, h, _ := e.raw("GET", "/queue/framed?ticket="+ticket, nil)
	csp := h.Get("Content-Security-Policy")
	if st != http.StatusOK || !strings.Contains(csp, "frame-ancestors 'self' https://shop.example.com") ||
		!strings.Contains(csp, "default-src 'none'") || h.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("page: %d, CSP %q, Referrer-Policy %q", st, csp, h.Get("Referrer-Policy"))
	}
	if fa := csp[strings.Index(csp, "frame-ancestors"):]; strings.Count(fa, "https://") != 1 || strings.Contains(fa, "*") {
		t.Fatalf("frame-ancestors %q allows more than the room's domain", fa)
	}
	// A second visitor goes through the gateway: sent on with a ticket (to
	// the page) or a token (to the shop).
	st, h, _ = e.raw("GET", "/queue/framed/enter?return="+url.QueryEscape("https://shop.example.com/cart"), nil)
	loc := h.Get("Location")
	if st != http.StatusFound || !(strings.Contains(loc, "ticket=") || strings.Contains(loc, "aditus_queue_token=")) ||
		h.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("gateway: %d, Location %q, Referrer-Policy %q", st, h.Get("Location"), h.Get("Referrer-Policy"))
	}
	st, h, _ = e.raw("GET", "/queue/no-such-room", nil)
	if st != http.StatusNotFound || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'self'") {
		t.Fatalf("unknown room's page: %d, CSP %q", st, h.Get("Content-Security-Policy"))
	}
}
