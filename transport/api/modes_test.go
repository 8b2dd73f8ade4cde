package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/token"
)

// modesWorld is a room at 60 a minute (a burst of 5) on a still clock.
func modesWorld(t *testing.T) (*env, *stillClock, string, string) {
	clock := newStillClock()
	e := newEnvWith(t, func(d *grain.Deps, c *Config) { d.Now, c.Now = clock.Now, clock.Now })
	id, secret := e.createRoom("modes", 60)
	return e, clock, id, secret
}

// setMode changes the room's mode and waits until this front answers
// status with it (the grain publishes the view just after the change).
func setMode(e *env, id, ticket, mode string, edit func(site map[string]any)) {
	e.t.Helper()
	e.patchSite(id, func(site map[string]any) {
		site["mode"] = mode
		if edit != nil {
			edit(site)
		}
	})
	waitFor(e.t, 10*time.Second, "the mode "+mode, func() bool {
		_, m, _ := e.do("GET", "/queue/modes/status?ticket="+url.QueryEscape(ticket), "", nil)
		want := mode
		if mode == "queue" {
			want = "" // left out in queue
		}
		got, _ := m["mode"].(string)
		return got == want
	})
}

// A sold-out room turns every visitor away with the operator's message,
// keeps tokens already issued valid, and keeps every number's place for a
// return to queue; maintenance answers 503 with Retry-After.
func TestSoldOutAndMaintenanceThroughHTTP(t *testing.T) {
	e, _, id, secret := modesWorld(t)
	_, first, _ := e.do("POST", "/queue/modes/join", "", nil)
	_, g, _ := e.do("POST", "/queue/modes/token", "", map[string]any{"ticket": first["ticket"]})
	jwt, _ := g["token"].(string)
	var ticket string
	for range 6 {
		_, j, _ := e.do("POST", "/queue/modes/join", "", nil)
		ticket = j["ticket"].(string) // number 7, one ahead of it
	}
	setMode(e, id, ticket, "soldOut", func(site map[string]any) {
		site["soldOutMessage"] = map[string]any{"de": "Ausverkauft.", "en": "Sold out.", "linkUrl": "https://shop.example.com/returns"}
	})
	for _, c := range []struct{ method, path string }{
		{"POST", "/queue/modes/join"}, {"GET", "/queue/modes/status?ticket=" + url.QueryEscape(ticket)}, {"POST", "/queue/modes/token"},
	} {
		st, m, _ := e.do(c.method, c.path, "", map[string]any{"ticket": ticket})
		msg, _ := m["modeMessage"].(map[string]any)
		if st != http.StatusGone || m["error"] != "sold_out" || m["mode"] != "soldOut" || msg["en"] != "Sold out." ||
			msg["linkUrl"] != "https://shop.example.com/returns" {
			t.Fatalf("%s %s when sold out: %d %v, want 410 sold_out with the message", c.method, c.path, st, m)
		}
	}
	if _, err := token.Verify([]byte(secret), "modes", jwt, time.Now()); err != nil {
		t.Fatalf("a token issued before the sale ended: %v", err)
	}
	if st, v, _ := e.do("GET", "/queue/modes/verify?token="+url.QueryEscape(jwt), "", nil); st != 200 || v["valid"] != true {
		t.Fatalf("verify of an issued token when sold out: %d %v", st, v)
	}
	res, _ := e.get("/queue/modes/enter", browserAccept)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound || !strings.Contains(loc, "/queue/modes") || strings.Contains(loc, "ticket=") {
		t.Fatalf("gateway link when sold out: %d %q, want the room's page without a number", res.StatusCode, loc)
	}

	setMode(e, id, ticket, "maintenance", nil)
	st, m, h := e.do("POST", "/queue/modes/join", "", nil)
	if st != http.StatusServiceUnavailable || m["error"] != "maintenance" || h.Get("Retry-After") != "120" {
		t.Fatalf("join in maintenance: %d %v Retry-After %q", st, m, h.Get("Retry-After"))
	}

	setMode(e, id, ticket, "queue", nil)
	if _, s, _ := e.do("GET", "/queue/modes/status?ticket="+url.QueryEscape(ticket), "", nil); s["number"] != 7.0 || s["ahead"] != 1.0 {
		t.Fatalf("status back in queue: %v, want number 7 with one ahead", s)
	}
	if _, j, _ := e.do("POST", "/queue/modes/join", "", nil); j["number"] != 8.0 || j["admitted"] != false {
		t.Fatalf("first join back in queue: %v, want number 8, waiting", j)
	}

	_, audit, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/audit", adminTok, nil)
	b, _ := json.Marshal(audit)
	for _, want := range []string{"queue → soldOut", "soldOut → maintenance", "maintenance → queue"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("audit lacks %q: %s", want, b)
		}
	}
}

// The emergency stop numbers arrivals but admits nobody, however long it
// lasts; lifted, the line goes on at the rate from where it stopped.
func TestQueueAllThroughHTTP(t *testing.T) {
	e, clock, id, _ := modesWorld(t)
	var ticket string
	for range 7 {
		_, j, _ := e.do("POST", "/queue/modes/join", "", nil)
		ticket = j["ticket"].(string)
	}
	setMode(e, id, ticket, "queueAll", nil)
	st, j, _ := e.do("POST", "/queue/modes/join", "", nil)
	if st != 200 || j["number"] != 8.0 || j["admitted"] != false || j["mode"] != "queueAll" {
		t.Fatalf("join during the stop: %d %v, want number 8 waiting in queueAll", st, j)
	}
	clock.Advance(10 * time.Minute)
	if _, s, _ := e.do("GET", "/queue/modes/status?ticket="+url.QueryEscape(ticket), "", nil); s["serving"] != 5.0 || s["admitted"] != false {
		t.Fatalf("status 10 minutes into the stop: %v, want serving still 5", s)
	}
	if st, m, _ := e.do("POST", "/queue/modes/token", "", map[string]any{"ticket": ticket}); st != http.StatusTooEarly {
		t.Fatalf("token during the stop: %d %v, want 425", st, m)
	}
	setMode(e, id, ticket, "queue", nil)
	clock.Advance(2 * time.Second)
	if _, s, _ := e.do("GET", "/queue/modes/status?ticket="+url.QueryEscape(ticket), "", nil); s["serving"] != 7.0 || s["admitted"] != true {
		t.Fatalf("status 2 s after the stop was lifted: %v, want serving 7 (one a second from 5)", s)
	}
}

// In passthrough nobody waits: every join is admitted with its token, and
// the gateway link forwards at once; the joins are still counted.
func TestPassthroughThroughHTTP(t *testing.T) {
	e, _, id, secret := modesWorld(t)
	var ticket string
	for range 7 {
		_, j, _ := e.do("POST", "/queue/modes/join", "", nil)
		ticket = j["ticket"].(string)
	}
	setMode(e, id, ticket, "passthrough", nil)
	if _, s, _ := e.do("GET", "/queue/modes/status?ticket="+url.QueryEscape(ticket), "", nil); s["admitted"] != true {
		t.Fatalf("a waiting number on passthrough: %v, want admitted", s)
	}
	st, j, _ := e.do("POST", "/queue/modes/join", "", nil)
	if st != 200 || j["number"] != 8.0 || j["admitted"] != true || j["mode"] != "passthrough" {
		t.Fatalf("join in passthrough: %d %v", st, j)
	}
	if _, err := token.Verify([]byte(secret), "modes", j["token"].(string), time.Now()); err != nil {
		t.Fatalf("the join's token: %v", err)
	}
	res, _ := e.get("/queue/modes/enter", browserAccept)
	if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "https://shop.example.com/tickets") || !strings.Contains(loc, "aditus_queue_token=") {
		t.Fatalf("gateway link in passthrough: %d %q, want the shop with a token", res.StatusCode, loc)
	}
	if _, info, _ := e.do("GET", "/queue/modes/info", "", nil); info["serving"] != 9.0 || info["waiting"] != 0.0 {
		t.Fatalf("info in passthrough: %v, want 9 counted and admitted", info)
	}
}

// Bad mode fields are refused with 422 naming the field.
func TestModeFieldsValidated(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	for _, tc := range []struct {
		field string
		value any
		want  string
	}{
		{"mode", "closed", "mode"},
		{"soldOutMessage", map[string]any{"en": "x", "linkUrl": "ftp://x"}, "soldOutMessage.linkUrl"},
		{"maintenanceMessage", map[string]any{"de": strings.Repeat("x", 1001)}, "maintenanceMessage.de"},
		{"waitingStatus", 201, "waitingStatus"},
	} {
		_, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil)
		site[tc.field] = tc.value
		st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, site)
		if st != http.StatusUnprocessableEntity || m["error"] != "invalid" || m["field"] != tc.want {
			t.Errorf("%s %v: %d %v, want 422 naming %s", tc.field, tc.value, st, m, tc.want)
		}
	}
	if _, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil); site["mode"] != "queue" || site["waitingStatus"] != 200.0 {
		t.Fatalf("site after refused changes: mode %v waitingStatus %v, want queue and 200", site["mode"], site["waitingStatus"])
	}
}
