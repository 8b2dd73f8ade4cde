package api

import (
	"net/http"
	"strings"
	"testing"
)

// A gateway link fetched by a link previewer, a prefetch or HEAD is sent
// to the page without a number: none is drawn until a visitor comes, and
// the first visitor's join then takes number 1.
func TestEnterPreviewDrawsNoNumber(t *testing.T) {
	e := newEnv(t)
	e.createRoom("spring", 1)
	for _, tc := range []struct {
		name, method string
		hdr          []string
	}{
		{"head", http.MethodHead, nil},
		{"sec-purpose", http.MethodGet, []string{"Sec-Purpose", "prefetch;prerender"}},
		{"purpose", http.MethodGet, []string{"Purpose", "prefetch"}},
		{"safari", http.MethodGet, []string{"X-Purpose", "preview"}},
		{"slack", http.MethodGet, []string{"User-Agent", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"}},
		{"facebook", http.MethodGet, []string{"User-Agent", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"}},
		{"discord", http.MethodGet, []string{"User-Agent", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)"}},
		{"whatsapp", http.MethodGet, []string{"User-Agent", "WhatsApp/2.23.20.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, h := e.do(tc.method, "/queue/spring/enter", "", nil, append([]string{"Accept", "text/html"}, tc.hdr...)...)
			if loc := h.Get("Location"); st != http.StatusFound || !strings.HasPrefix(loc, "http://queue.test/queue/spring") || strings.Contains(loc, "ticket=") {
				t.Fatalf("%d Location %q, want 302 to the page without a ticket", st, loc)
			}
		})
	}
	if st, j, _ := e.do("POST", "/queue/spring/join", "", nil); st != http.StatusOK || j["number"] != float64(1) {
		t.Fatalf("the first visitor's join: %d %v, want number 1 (the previews drew none)", st, j)
	}
	st, _, h := e.do(http.MethodGet, "/queue/spring/enter", "", nil, "Accept", "text/html",
		"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36")
	if loc := h.Get("Location"); st != http.StatusFound || !strings.Contains(loc, "ticket=") {
		t.Fatalf("a browser: %d Location %q, want a number drawn", st, loc)
	}
}
