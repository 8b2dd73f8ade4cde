package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// app asks path as an app does, with Accept: application/json.
func (e *env) app(path string, hdr ...string) (int, map[string]any, http.Header) {
	e.t.Helper()
	return e.do("GET", path, "", nil, append([]string{"Accept", "application/json"}, hdr...)...)
}

// An app follows its place with JSON: a number on the first call, its
// place while it waits (with the room's waiting status), and the token
// once admitted; the page stays HTML for browsers.
func TestAppFollowsItsPlaceWithJSON(t *testing.T) {
	for _, waiting := range []int{200, 202, 429} {
		t.Run(http.StatusText(waiting), func(t *testing.T) {
			e, clock, id, _ := modesWorld(t)
			e.patchSite(id, func(site map[string]any) { site["waitingStatus"] = waiting; site["message"] = "Doors at nine." })
			for range 5 { // the burst
				if st, a, _ := e.app("/queue/modes"); st != 200 || a["state"] != "admitted" || a["token"] == "" {
					t.Fatalf("app within the burst: %d %v, want admitted with a token", st, a)
				}
			}
			st, a, h := e.app("/queue/modes")
			if st != waiting || a["state"] != "waiting" || a["mode"] != "queue" || a["position"] != 6.0 || a["ahead"] != 0.0 ||
				a["estimatedWaitSeconds"] != 1.0 || a["ticket"] == nil || a["message"] != "Doors at nine." || h.Get("Retry-After") == "" {
				t.Fatalf("app over the rate: %d %v Retry-After %q", st, a, h.Get("Retry-After"))
			}
			if ev, _ := a["event"].(map[string]any); ev["name"] != "Sale modes" || ev["opensAt"] != nil {
				t.Fatalf("event: %v", a["event"])
			}
			for _, k := range []string{"state", "mode", "position", "ahead", "estimatedWaitSeconds", "refreshSeconds", "ticket", "message", "event"} {
				if _, ok := a[k]; !ok {
					t.Errorf("answer lacks %s: %v", k, a)
				}
			}
			ticket := a["ticket"].(string)
			if st, b, _ := e.app("/queue/modes?ticket=" + url.QueryEscape(ticket)); st != waiting || b["position"] != 6.0 || b["ticket"] != ticket {
				t.Fatalf("app asking again: %d %v", st, b)
			}
			clock.Advance(2 * time.Second)
			st, b, _ := e.app("/queue/modes/enter?ticket=" + url.QueryEscape(ticket))
			if st != 200 || b["state"] != "admitted" || b["token"] == "" || b["targetUrl"] != "https://shop.example.com/tickets" {
				t.Fatalf("gateway link as an app, once admitted: %d %v", st, b)
			}
			res, body := e.get("/queue/modes", browserAccept)
			if res.StatusCode != 200 || !strings.Contains(body, "<html") || !strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Accept") {
				t.Fatalf("the page for a browser: %d %v", res.StatusCode, res.Header)
			}
		})
	}
}

// A closed room answers apps with its state, the page's sentence and the
// operator's words in the visitor's language; bad tickets and unknown
// rooms get the contract's JSON errors.
func TestAppStateOfClosedRoomsAndErrors(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	var ticket string
	for range 6 { // the sixth waits: a burst of five
		_, a, _ := e.app("/queue/modes")
		ticket = a["ticket"].(string)
	}
	setMode(e, id, ticket, "soldOut", func(site map[string]any) {
		site["soldOutMessage"] = map[string]any{"de": "Alles verkauft.", "en": "All gone."}
	})
	st, b, _ := e.app("/queue/modes?ticket="+url.QueryEscape(ticket), "Accept-Language", "de-DE")
	if msg, _ := b["message"].(string); st != http.StatusGone || b["state"] != "soldOut" || !strings.Contains(msg, "Alles verkauft.") ||
		!strings.Contains(msg, "Ausverkauft") && !strings.Contains(msg, "Verkauf ist beendet") || b["ticket"] != nil {
		t.Fatalf("app at a sold-out room: %d %v", st, b)
	}
	setMode(e, id, ticket, "maintenance", nil)
	if st, b, h := e.app("/queue/modes/enter"); st != http.StatusServiceUnavailable || b["state"] != "maintenance" || h.Get("Retry-After") != "120" {
		t.Fatalf("app at a room in maintenance: %d %v %v", st, b, h)
	}
	setMode(e, id, ticket, "queueAll", nil)
	if st, b, _ := e.app("/queue/modes?ticket=" + url.QueryEscape(ticket)); st != 200 || b["mode"] != "queueAll" ||
		!strings.Contains(b["message"].(string), "keep your place") {
		t.Fatalf("app during the emergency stop: %d %v", st, b)
	}
	if st, b, _ := e.app("/queue/modes?ticket=forged"); st != http.StatusUnauthorized || b["error"] != "bad_ticket" {
		t.Fatalf("forged ticket: %d %v", st, b)
	}
	if st, m, h := e.app("/queue/no-such-room"); st != http.StatusNotFound || m["error"] != "not_found" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("unknown room as an app: %d %v", st, m)
	}
}
