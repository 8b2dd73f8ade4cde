package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
)

// saleDayEvents is the day of the use case, hour 0 being 09:00: the
// fan-club pre-sale from 09:00 to 09:30 at 300 a minute, the main sale
// from 10:00 with a pre-queue and draw from 09:30 at 2,000 a minute, sold
// out from 18:00.
func saleDayEvents(nine time.Time) []map[string]any {
	return []map[string]any{
		{"name": "Fan club", "startsAt": nine, "endsAt": nine.Add(30 * time.Minute), "ratePerMinute": 300},
		{"name": "Main sale", "startsAt": nine.Add(time.Hour), "endsAt": nine.Add(9 * time.Hour),
			"prequeueFrom": nine.Add(30 * time.Minute), "ratePerMinute": 2000, "endMode": "soldOut"},
	}
}

// TestSaleDayThroughHTTP runs the on-sale day from one room configured
// ahead, on a still clock: the pre-sale admits at 300 a minute, the main
// sale's pre-queue takes numbers for the draw, the main sale admits the
// drawn order at 2,000 a minute, and at 18:00 the room is sold out while
// tokens already issued stay valid. No position admits two numbers.
func TestSaleDayThroughHTTP(t *testing.T) {
	clock := newStillClock()
	e := newEnvWith(t, func(d *grain.Deps, c *Config) { d.Now, c.Now = clock.Now, clock.Now })
	nine := clock.Now().Add(time.Hour).UTC()
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{
		"slug": "day", "name": "On-sale day", "targetUrl": "https://shop.example.com/", "ratePerMinute": 100, "active": true,
		"addressBudget": map[string]any{"perMinute": 6000000, "burst": 10000000}, "events": saleDayEvents(nine)})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, m)
	}
	id := m["site"].(map[string]any)["id"].(string)
	if ev, _ := m["site"].(map[string]any)["events"].([]any); len(ev) != 2 {
		t.Fatalf("events as stored: %v", m["site"])
	}
	serving := func() float64 {
		_, i, _ := e.do("GET", "/queue/day/info", "", nil)
		return i["serving"].(float64)
	}
	join := func(n int) []string {
		t.Helper()
		var out []string
		for range n {
			st, j, _ := e.do("POST", "/queue/day/join", "", nil)
			if st != 200 {
				t.Fatalf("join at %v: %d %v", clock.Now().Sub(nine), st, j)
			}
			out = append(out, j["ticket"].(string))
		}
		return out
	}
	// moveTo advances the clock to nine+d and waits until the audit trail
	// shows the room's change into the settings named by detail.
	moveTo := func(d time.Duration, detail string) {
		t.Helper()
		clock.Advance(nine.Add(d).Sub(clock.Now()))
		waitFor(t, 10*time.Second, detail, func() bool {
			_, a, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/audit", adminTok, nil)
			l, _ := a["audit"].([]any)
			last, _ := l[len(l)-1].(map[string]any)
			return last["action"] == "schedule" && strings.HasPrefix(last["detail"].(string), detail)
		})
	}

	clock.Advance(59 * time.Minute) // 08:59
	early := join(600)
	moveTo(0, "events[0] Fan club: live")
	s0 := serving()
	clock.Advance(time.Minute)
	if got := serving() - s0; got != 300 {
		t.Fatalf("admitted in the pre-sale's first minute: got %v, want 300", got)
	}

	moveTo(30*time.Minute, "events[1] Main sale: pre-queue")
	pre := join(50)
	for _, tk := range pre[:3] {
		_, s, _ := e.do("GET", "/queue/day/status?ticket="+url.QueryEscape(tk), "", nil)
		if s["admitted"] != false || s["opensAt"] != nine.Add(time.Hour).Format(time.RFC3339) {
			t.Fatalf("status in the pre-queue: %v", s)
		}
	}

	moveTo(time.Hour, "events[1] Main sale: live")
	positions := map[float64]string{}
	waitFor(t, 10*time.Second, "the draw", func() bool {
		_, s, _ := e.do("GET", "/queue/day/status?ticket="+url.QueryEscape(pre[0]), "", nil)
		return s["position"] != nil
	})
	for _, tk := range append(append([]string{}, early...), pre...) {
		_, s, _ := e.do("GET", "/queue/day/status?ticket="+url.QueryEscape(tk), "", nil)
		p, _ := s["position"].(float64)
		if p == 0 {
			p = s["number"].(float64)
		}
		if o, ok := positions[p]; ok && o != tk {
			t.Fatalf("two numbers at position %v", p)
		}
		positions[p] = tk
	}
	main := join(2500)
	s1 := serving()
	clock.Advance(time.Minute)
	if got := serving() - s1; got != 2000 {
		t.Fatalf("admitted in the main sale's first minute: got %v, want 2000", got)
	}
	clock.Advance(nine.Add(9*time.Hour - 5*time.Minute).Sub(clock.Now())) // 17:55
	_, g, _ := e.do("POST", "/queue/day/token", "", map[string]any{"ticket": main[0]})
	jwt, _ := g["token"].(string)
	if jwt == "" {
		t.Fatalf("token in the main sale: %v", g)
	}

	moveTo(9*time.Hour, "events[1] Main sale: ended, mode soldOut")
	if st, j, _ := e.do("POST", "/queue/day/join", "", nil); st != http.StatusGone || j["error"] != "sold_out" {
		t.Fatalf("join after 18:00: %d %v", st, j)
	}
	if st, v, _ := e.do("GET", "/queue/day/verify?token="+url.QueryEscape(jwt), "", nil); st != 200 || v["valid"] != true {
		t.Fatalf("a token of the main sale after 18:00: %d %v", st, v)
	}
	if _, s, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil); s["mode"] != "queue" || s["ratePerMinute"] != 100.0 {
		t.Fatalf("the operator's settings after the day: mode %v rate %v, want them as written", s["mode"], s["ratePerMinute"])
	}
}

// TestEventsRefusedPerField: every bad event is a 422 naming its field.
func TestEventsRefusedPerField(t *testing.T) {
	e := newEnv(t)
	id, _ := e.createRoom("events", 60)
	nine := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	for _, tc := range []struct {
		name  string
		edit  func(ev []map[string]any) []map[string]any
		field string
	}{
		{"overlap", func(ev []map[string]any) []map[string]any {
			ev[1]["prequeueFrom"] = nine.Add(20 * time.Minute)
			return ev
		}, "events[1].prequeueFrom"},
		{"more than five", func(ev []map[string]any) []map[string]any {
			for i := range 4 {
				h := time.Duration(10+i) * time.Hour
				ev = append(ev, map[string]any{"startsAt": nine.Add(h), "endsAt": nine.Add(h + time.Minute)})
			}
			return ev
		}, "events"},
		{"end before start", func(ev []map[string]any) []map[string]any {
			ev[0]["endsAt"] = nine.Add(-time.Minute)
			return ev
		}, "events[0].endsAt"},
		{"pre-queue after start", func(ev []map[string]any) []map[string]any {
			ev[1]["prequeueFrom"] = nine.Add(2 * time.Hour)
			return ev
		}, "events[1].prequeueFrom"},
		{"bad rate", func(ev []map[string]any) []map[string]any {
			ev[0]["ratePerMinute"] = -3
			return ev
		}, "events[0].ratePerMinute"},
		{"bad end mode", func(ev []map[string]any) []map[string]any {
			ev[1]["endMode"] = "closed"
			return ev
		}, "events[1].endMode"},
		{"bad pow", func(ev []map[string]any) []map[string]any {
			ev[1]["pow"] = map[string]any{"enabled": true, "bits": 99}
			return ev
		}, "events[1].pow.bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := e.patchSite(id, func(site map[string]any) {})
			site["events"] = tc.edit(saleDayEvents(nine))
			st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, site)
			if st != http.StatusUnprocessableEntity || m["error"] != "invalid" || m["field"] != tc.field {
				t.Fatalf("got %d %v, want 422 on %s", st, m, tc.field)
			}
		})
	}
}

// TestSitePreview answers the settings at an instant, and 422 for a bad at.
func TestSitePreview(t *testing.T) {
	e := newEnv(t)
	nine := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "preview", "name": "Preview",
		"ratePerMinute": 100, "events": saleDayEvents(nine)})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, m)
	}
	id := m["site"].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		at         time.Duration
		mode       string
		rate       float64
		event      any
		stage      any
		preQueue   bool
		nextChange any
	}{
		{-time.Minute, "queue", 100, nil, nil, false, nine.Format(time.RFC3339)},
		{10 * time.Minute, "queue", 300, 0.0, "live", false, nine.Add(30 * time.Minute).Format(time.RFC3339)},
		{45 * time.Minute, "queue", 2000, 1.0, "prequeue", true, nine.Add(time.Hour).Format(time.RFC3339)},
		{2 * time.Hour, "queue", 2000, 1.0, "live", false, nine.Add(9 * time.Hour).Format(time.RFC3339)},
		{10 * time.Hour, "soldOut", 100, 1.0, "after", false, nil},
	} {
		at := nine.Add(tc.at).Format(time.RFC3339)
		st, p, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/preview?at="+url.QueryEscape(at), adminTok, nil)
		if st != 200 || p["mode"] != tc.mode || p["ratePerMinute"] != tc.rate || p["event"] != tc.event ||
			p["stage"] != tc.stage || p["preQueue"] != tc.preQueue || p["nextChange"] != tc.nextChange {
			t.Fatalf("preview at %s: %d %v", at, st, p)
		}
	}
	for _, bad := range []string{"tomorrow", "2026-13-01T00:00:00Z", "1066-10-14T09:00:00Z"} {
		st, p, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/preview?at="+url.QueryEscape(bad), adminTok, nil)
		if st != http.StatusUnprocessableEntity || p["field"] != "at" {
			t.Fatalf("preview at %q: %d %v, want 422 on at", bad, st, p)
		}
	}
}
