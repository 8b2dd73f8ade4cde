package api

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browser is a visitor without JavaScript: its own cookies, redirects
// not followed, so the test sees each answer.
type browser struct {
	t      *testing.T
	e      *env
	client *http.Client
}

func newBrowser(e *env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: e.t, e: e, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (b *browser) send(method, path string, hdr ...string) (int, string, http.Header) {
	b.t.Helper()
	req, _ := http.NewRequest(method, b.e.srv.URL+path, nil)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Header
}

var numberOnPage = regexp.MustCompile(`id="aq-number">(\d+)<`)

// TestWaitWithoutScript is the visitor without JavaScript: the form draws
// a number, the page shows it and reloads itself, and each is forwarded
// with a token in the order of their numbers as the line reaches them.
func TestWaitWithoutScript(t *testing.T) {
	e, clock, _, _ := modesWorld(t)
	const path = "/queue/modes/wait?return=" + "https%3A%2F%2Fshop.example.com%2Fevent%2F42"
	var visitors []*browser
	for i := range 7 {
		b := newBrowser(e)
		st, html, _ := b.send("GET", path)
		if st != http.StatusOK || !strings.Contains(html, `<form class="aq-nojs" method="post" action="/queue/modes/wait?return=`) {
			t.Fatalf("first visit: %d, no form in %s", st, html)
		}
		st, _, h := b.send("POST", path)
		if st != http.StatusSeeOther || h.Get("Location") != path {
			t.Fatalf("form post: %d to %q, want 303 to %s", st, h.Get("Location"), path)
		}
		if c := h.Get("Set-Cookie"); !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "Path=/queue/modes/") {
			t.Fatalf("ticket cookie %q", c)
		}
		if st, _, h := b.send("POST", path); st != http.StatusSeeOther || h.Get("Set-Cookie") != "" {
			t.Fatalf("the form sent twice: %d, cookie %q; want the number kept", st, h.Get("Set-Cookie"))
		}
		if i >= 5 { // the burst admits the first five at once
			st, html, _ = b.send("GET", path)
			if st != http.StatusOK || numberOnPage.FindStringSubmatch(html)[1] != []string{"6", "7"}[i-5] {
				t.Fatalf("visitor %d: %d %s", i+1, st, html)
			}
			if !strings.Contains(html, `<meta http-equiv="refresh" content="5">`) || strings.Contains(html, "<script") {
				t.Fatalf("visitor %d's page does not reload itself, or has a script: %s", i+1, html)
			}
		}
		visitors = append(visitors, b)
	}
	forwarded := func(b *browser) bool {
		st, _, h := b.send("GET", path)
		loc, _ := url.Parse(h.Get("Location"))
		if st != http.StatusFound {
			return false
		}
		if loc.Host != "shop.example.com" || loc.Path != "/event/42" || loc.Query().Get("aditus_queue_token") == "" {
			t.Fatalf("forwarded to %s", h.Get("Location"))
		}
		return true
	}
	for i, b := range visitors[:5] {
		if !forwarded(b) {
			t.Fatalf("visitor %d within the burst is not forwarded", i+1)
		}
	}
	if forwarded(visitors[5]) || forwarded(visitors[6]) {
		t.Fatal("a visitor beyond the burst is forwarded before the line reaches them")
	}
	clock.Advance(time.Second) // one more at 60 a minute
	waitFor(t, 5*time.Second, "the sixth visitor's turn", func() bool { return forwarded(visitors[5]) })
	if forwarded(visitors[6]) {
		t.Fatal("the seventh visitor is forwarded with the sixth")
	}
	clock.Advance(time.Second)
	waitFor(t, 5*time.Second, "the seventh visitor's turn", func() bool { return forwarded(visitors[6]) })
	// The cookie is gone with the token: the next visit offers a number.
	if st, html, _ := visitors[6].send("GET", path); st != http.StatusOK || !strings.Contains(html, "aq-nojs") {
		t.Errorf("after forwarding: %d %s", st, html)
	}
}

// TestWaitWithoutScriptClosedAndPow checks that no number is drawn in a
// closed room or one that asks for proof of work, and that the page says
// why in the visitor's language, with the operator's words.
func TestWaitWithoutScriptClosedAndPow(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	_, j, _ := e.do("POST", "/queue/modes/join", "", nil)
	setMode(e, id, j["ticket"].(string), "soldOut", func(site map[string]any) {
		site["soldOutMessage"] = map[string]any{"en": "Sold out.", "texts": map[string]any{"fr": "Tout est vendu."}, "linkUrl": "https://shop.example.com/returns"}
	})
	b := newBrowser(e)
	if st, _, h := b.send("POST", "/queue/modes/wait"); st != http.StatusSeeOther || strings.Contains(h.Get("Set-Cookie"), "aq-ticket") {
		t.Fatalf("post to a sold-out room: %d, cookie %q", st, h.Get("Set-Cookie"))
	}
	st, html, h := b.send("GET", "/queue/modes/wait", "Accept-Language", "fr-FR,fr;q=0.9")
	for _, want := range []string{"Épuisé", "Tout est vendu.", `href="https://shop.example.com/returns"`, `content="60"`} {
		if !strings.Contains(html, want) {
			t.Errorf("sold-out page lacks %q", want)
		}
	}
	if st != http.StatusOK || h.Get("Content-Language") != "fr" || strings.Contains(html, "aq-nojs") {
		t.Errorf("sold-out page: %d %q, or it offers a number", st, h.Get("Content-Language"))
	}
	// The hosted page carries the same words in its HTML.
	_, page, _ := b.send("GET", "/queue/modes", "Accept-Language", "fr")
	if !strings.Contains(page, "Tout est vendu.") || !strings.Contains(page, "La vente est terminée") {
		t.Error("the hosted page of a sold-out room lacks the operator's words")
	}
	setMode(e, id, j["ticket"].(string), "queue", func(site map[string]any) {
		site["pow"] = map[string]any{"enabled": true, "bits": 8, "autoFactor": 4}
	})
	waitFor(t, 5*time.Second, "proof of work in force", func() bool {
		_, html, _ := b.send("GET", "/queue/modes/wait")
		return strings.Contains(html, "needs JavaScript")
	})
	if _, _, h := b.send("POST", "/queue/modes/wait"); strings.Contains(h.Get("Set-Cookie"), "aq-ticket") {
		t.Error("a number drawn without proof of work")
	}
}

// TestPageLanguageChoice checks the order of the page's language: the
// visitor's switch (kept in a cookie), the room's setting, the browser's.
func TestPageLanguageChoice(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	b := newBrowser(e)
	lang := func(path string) string {
		_, html, h := b.send("GET", path, "Accept-Language", "ja,en;q=0.5")
		if m := regexp.MustCompile(`<html lang="(\w+)"`).FindStringSubmatch(html); m == nil || m[1] != h.Get("Content-Language") {
			t.Fatalf("page language %v, header %q", m, h.Get("Content-Language"))
		}
		return h.Get("Content-Language")
	}
	if got := lang("/queue/modes"); got != "ja" {
		t.Errorf("from Accept-Language: %s, want ja", got)
	}
	e.patchSite(id, func(site map[string]any) { site["language"] = "pl" })
	waitFor(t, 5*time.Second, "the room's language", func() bool { return lang("/queue/modes") == "pl" })
	if got := lang("/queue/modes?lang=ar"); got != "ar" {
		t.Errorf("the switch: %s, want ar", got)
	}
	if got := lang("/queue/modes/wait"); got != "ar" {
		t.Errorf("the choice is not kept: %s, want ar", got)
	}
	if got := lang("/queue/modes?lang=klingon"); got != "ar" {
		t.Errorf("an unknown choice changed the language to %s", got)
	}
	st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, map[string]any{"language": "xx"})
	if st != http.StatusBadRequest && st != http.StatusUnprocessableEntity {
		t.Errorf("language xx: %d %v, want a refusal", st, m)
	}
}

// TestWaitWithoutScriptOverBudget checks that a browser over its
// address's budget of new numbers gets the page saying so (429, in its
// language), not JSON, and no number.
func TestWaitWithoutScriptOverBudget(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	e.patchSite(id, func(site map[string]any) { site["addressBudget"] = map[string]any{"perMinute": 1, "burst": 1} })
	// Each try from a new browser on the same address.
	waitFor(t, 5*time.Second, "the budget in force", func() bool {
		st, _, _ := newBrowser(e).send("POST", "/queue/modes/wait")
		return st == http.StatusTooManyRequests
	})
	st, html, h := newBrowser(e).send("POST", "/queue/modes/wait", "Accept-Language", "it")
	if st != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("over budget: %d, Retry-After %q, %s", st, h.Get("Retry-After"), h.Get("Content-Type"))
	}
	if !strings.Contains(html, "sono stati presi troppi numeri") || !strings.Contains(html, `class="aq-nojs"`) || strings.Contains(h.Get("Set-Cookie"), "aq-ticket") {
		t.Errorf("the page does not say why, offers no form, or drew a number: %s", html)
	}
}

// TestWaitWithoutScriptFromGatewayLink: the gateway link draws the number
// and hands its ticket to the page; without JavaScript the page's form
// keeps that number instead of drawing another.
func TestWaitWithoutScriptFromGatewayLink(t *testing.T) {
	e, _, _, _ := modesWorld(t)
	for range 6 { // the burst is taken: the link queues
		e.do("POST", "/queue/modes/join", "", nil)
	}
	b := newBrowser(e)
	st, _, h := b.send("GET", "/queue/modes/enter")
	loc, _ := url.Parse(h.Get("Location"))
	ticket := loc.Query().Get("ticket")
	if st != http.StatusFound || ticket == "" {
		t.Fatalf("gateway link: %d to %q", st, h.Get("Location"))
	}
	_, page, _ := b.send("GET", loc.RequestURI())
	form := regexp.MustCompile(`<form class="aq-nojs" method="post" action="([^"]+)"`).FindStringSubmatch(page)
	if form == nil || !strings.Contains(page, `id="aq-number">7<`) {
		t.Fatalf("the page lacks the form or the number 7: %s", page)
	}
	action := strings.ReplaceAll(form[1], "&amp;", "&")
	st, _, h = b.send("POST", action)
	if st != http.StatusSeeOther || strings.Contains(h.Get("Location"), "ticket") || !strings.Contains(h.Get("Set-Cookie"), url.QueryEscape(ticket)) && !strings.Contains(h.Get("Set-Cookie"), ticket) {
		t.Fatalf("form with the ticket: %d to %q, cookie %q", st, h.Get("Location"), h.Get("Set-Cookie"))
	}
	if _, html, _ := b.send("GET", h.Get("Location")); !strings.Contains(html, `id="aq-number">7<`) {
		t.Errorf("the page without JavaScript does not show number 7: %s", html)
	}
	if _, j, _ := e.do("POST", "/queue/modes/join", "", nil); j["number"] != float64(8) {
		t.Errorf("the next join got %v, want 8: the form drew a second number", j["number"])
	}
}

// TestAppStateMessageInLanguage: an app reads the room's message in its
// language, and the English one where the room has none in it.
func TestAppStateMessageInLanguage(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	e.patchSite(id, func(site map[string]any) {
		site["message"] = "Bring ID."
		site["messages"] = map[string]any{"tr": "Kimliğinizi getirin."}
	})
	waitFor(t, 5*time.Second, "the message in Turkish", func() bool {
		_, m, _ := e.app("/queue/modes", "Accept-Language", "tr-TR")
		return m["message"] == "Kimliğinizi getirin."
	})
	if _, m, _ := e.app("/queue/modes", "Accept-Language", "nl"); m["message"] != "Bring ID." {
		t.Errorf("a language without its own message: %v", m["message"])
	}
	if st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, map[string]any{"messages": map[string]any{"xx": "?"}}); st < 400 {
		t.Errorf("a message in an unknown language: %d %v", st, m)
	}
}
