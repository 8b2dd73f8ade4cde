package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestLang(t *testing.T) {
	for _, tc := range []struct {
		header, want string
	}{
		{"", "en"},
		{"de", "de"},
		{"de-DE", "de"},
		{"DE-at", "de"},
		{"de-CH,de;q=0.9,en;q=0.8", "de"},
		{"en-US,en;q=0.9,de;q=0.8", "en"},
		{"en;q=0.5, de;q=0.9", "de"},
		{"fr-FR,fr;q=0.9,de;q=0.8", "en"},
		{"de;q=0, en;q=0.1", "en"},
		{"de;q=0", "en"},
		{"*", "en"},
		{"*;q=0.5, de;q=0.4", "en"},
		{"en;q=0.8, de;q=0.8", "en"},
		{"de;q=0.8, en;q=0.8", "de"},
		{"de;q=abc, en;q=0.1", "en"},
		{"de;q=2", "en"},
		{"deu", "en"},
		{" de-DE ; q=1.0 ", "de"},
		{"en-GB;q=0.7,de-DE;q=0.71", "de"},
		{",,;q=1,", "en"},
	} {
		t.Run(tc.header, func(t *testing.T) {
			if got := Lang(tc.header); got != tc.want {
				t.Errorf("Lang(%q) = %q, want %q", tc.header, got, tc.want)
			}
		})
	}
}

func render(t *testing.T, p RoomPage) string {
	t.Helper()
	var buf bytes.Buffer
	if err := RenderRoom(&buf, p); err != nil {
		t.Fatalf("RenderRoom: %v", err)
	}
	return buf.String()
}

var roomDataBlock = regexp.MustCompile(`(?s)<script type="application/json" id="aq-room">(.*?)</script>`)

func pageData(t *testing.T, html string) roomData {
	t.Helper()
	m := roomDataBlock.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no aq-room data block in:\n%s", html)
	}
	var d roomData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("data block is not JSON: %v\n%s", err, m[1])
	}
	return d
}

func samplePage() RoomPage {
	return RoomPage{
		Slug:           "summer-fest",
		Name:           "Summer Festival 2026",
		Message:        "Presale starts at 10:00.\nLimit: 4 tickets.",
		HeaderImageURL: "https://cdn.example.com/key.jpg",
		AccentColor:    "#E4007C",
		Lang:           "en",
		BaseURL:        "https://queue.example.com/",
		ReturnURL:      "https://shop.example.com/event/42",
		Found:          true,
	}
}

func TestRenderRoomEscapes(t *testing.T) {
	evil := `</script><script>alert("x")</script> & 'quotes' "double" <img src=x onerror=alert(1)>`
	p := samplePage()
	p.Message = evil
	p.Name = evil
	p.ReturnURL = `https://shop.example.com/?q="</script><script>alert(1)</script>`
	p.Slug = `s"</script>`
	html := render(t, p)

	if n := strings.Count(html, "<script"); n != 3 {
		t.Errorf("page has %d <script elements, want 3 (data block, room.js, nomodule.js)", n)
	}
	for _, bad := range []string{`<img src=x`, `alert("x")</script>`, `onerror=alert(1)>`} {
		if strings.Contains(html, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	if !strings.Contains(html, `&lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;quotes&#39;`) {
		t.Errorf("message not HTML-escaped as text:\n%s", html)
	}
	d := pageData(t, html)
	if d.Name != evil || d.Slug != p.Slug || d.ReturnURL != p.ReturnURL {
		t.Errorf("data block does not round-trip: got name %q slug %q return %q", d.Name, d.Slug, d.ReturnURL)
	}
}

func TestRenderRoomData(t *testing.T) {
	p := samplePage()
	p.PowEnabled, p.PowBits = true, 15
	html := render(t, p)
	d := pageData(t, html)
	if d.Base != "https://queue.example.com" {
		t.Errorf("base = %q, want the trailing slash trimmed", d.Base)
	}
	if !d.Pow.Enabled || d.Pow.Bits != 15 {
		t.Errorf("pow = %+v, want enabled with 15 bits", d.Pow)
	}
	if !strings.HasPrefix(d.WorkerURL, "https://queue.example.com/queue/assets/pow-worker.") {
		t.Errorf("workerUrl = %q", d.WorkerURL)
	}
	if d.I18n != catalog["en"] {
		t.Errorf("i18n is not the English catalogue")
	}
	for _, want := range []string{
		`<html lang="en" dir="ltr">`,
		`<title>Summer Festival 2026 – Waiting room</title>`,
		`<img class="aq-hero" src="https://cdn.example.com/key.jpg"`,
		`--aq-accent:#e4007c`,
		`href="https://queue.example.com/queue/assets/room.` + assets["room.css"].version + `.css"`,
		`<script type="module" src="https://queue.example.com/queue/assets/room.` + assets["room.js"].version + `.js"`,
		`<script nomodule src="https://queue.example.com/queue/assets/nomodule.` + assets["nomodule.js"].version + `.js"`,
		"Presale starts at 10:00.\nLimit: 4 tickets.",
		`Verifying your browser…`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestRenderRoomLanguages(t *testing.T) {
	for _, tc := range []struct {
		lang, wantLang string
		wants          []string
	}{
		{"de", "de", []string{"Ihre Wartenummer", "Vor Ihnen", "Einlass aktuell bis", "Geschätzte Wartezeit", "Lassen Sie diese Seite geöffnet"}},
		{"en", "en", []string{"Your waiting number", "Ahead of you", "Now admitting up to", "Estimated wait", "Keep this page open"}},
		{"fr", "fr", []string{"Votre numéro d’attente", "Devant vous", "Attente estimée"}},
		{"ja", "ja", []string{"あなたの整理番号", `dir="ltr"`}},
		// The operator's words keep their own direction in a page of
		// the other.
		{"ar", "ar", []string{"رقم انتظارك", `dir="rtl"`, `<p class="aq-message" id="aq-message" dir="auto">`, `<h1 id="aq-title" dir="auto">`}},
		{"xx", "en", []string{"Your waiting number"}},
		{"", "en", []string{"Your waiting number"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			p := samplePage()
			p.Lang = tc.lang
			html := render(t, p)
			if !strings.Contains(html, `<html lang="`+tc.wantLang+`" dir="`+dir(tc.wantLang)+`">`) {
				t.Errorf("lang attribute is not %q", tc.wantLang)
			}
			for _, w := range tc.wants {
				if !strings.Contains(html, w) {
					t.Errorf("page in %q lacks %q", tc.lang, w)
				}
			}
			if d := pageData(t, html); d.Lang != tc.wantLang || d.I18n != catalog[tc.wantLang] {
				t.Errorf("data block lang = %q, want %q with its catalogue", d.Lang, tc.wantLang)
			}
		})
	}
}

func TestRenderRoomNotFound(t *testing.T) {
	for _, tc := range []struct{ lang, title, text string }{
		{"en", "Waiting room not found", "There is no waiting room at this address."},
		{"de", "Warteraum nicht gefunden", "Unter dieser Adresse gibt es keinen Warteraum."},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			html := render(t, RoomPage{Slug: "nope", Lang: tc.lang, BaseURL: "https://queue.example.com", Name: "Secret Room", Message: "Secret message"})
			for _, w := range []string{tc.title, tc.text, "<title>" + tc.title + "</title>", versionedName("room.css", assets["room.css"].version)} {
				if !strings.Contains(html, w) {
					t.Errorf("not-found page lacks %q", w)
				}
			}
			for _, bad := range []string{"aq-room", versionedName("room.js", assets["room.js"].version), "Secret Room", "Secret message", "<script"} {
				if strings.Contains(html, bad) {
					t.Errorf("not-found page contains %q", bad)
				}
			}
		})
	}
}

func TestRenderRoomDefaults(t *testing.T) {
	html := render(t, RoomPage{Slug: "plain", Found: true})
	for _, w := range []string{
		`--aq-accent:` + DefaultAccentColor,
		`<h1 id="aq-title" dir="auto">Waiting room</h1>`,
		`href="/queue/assets/room.` + assets["room.css"].version + `.css"`,
		`Getting your waiting number…`,
	} {
		if !strings.Contains(html, w) {
			t.Errorf("page with defaults lacks %q", w)
		}
	}
	for _, bad := range []string{"aq-hero", "aq-message"} {
		if strings.Contains(html, bad) {
			t.Errorf("page with defaults contains %q", bad)
		}
	}
}

func TestAccentColor(t *testing.T) {
	for _, tc := range []struct{ in, accent string }{
		{"#0A63C9", "#0a63c9"},
		{"#ffdd00", "#ffdd00"},
		{"red", DefaultAccentColor},
		{"#fff", DefaultAccentColor},
		{"#0a63c9;}body{display:none", DefaultAccentColor},
		{"", DefaultAccentColor},
	} {
		p := samplePage()
		p.AccentColor = tc.in
		if html := render(t, p); !strings.Contains(html, "--aq-accent:"+tc.accent+";") {
			t.Errorf("accent %q: page lacks --aq-accent:%s", tc.in, tc.accent)
		}
	}
	for _, hex := range []string{"#0a63c9", "#ffdd00", "#ffffff", "#e4007c", "#00ff00"} {
		r, g, b := parseHex(accentInk(hex))
		if c := contrastOnWhite(r, g, b); c < 4.5 {
			t.Errorf("accentInk(%s) = %s has contrast %.2f on white, want ≥ 4.5", hex, accentInk(hex), c)
		}
	}
	if got := accentInk("#0a63c9"); got != "#0a63c9" {
		t.Errorf("accentInk of a dark accent = %s, want it unchanged", got)
	}
}

func TestHeaderImage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://cdn.example.com/key.jpg", "https://cdn.example.com/key.jpg"},
		{"http://127.0.0.1:8080/key.png", "http://127.0.0.1:8080/key.png"},
		{"http://cdn.example.com/key.jpg", ""},
		{"javascript:alert(1)", ""},
		{"data:image/png;base64,AAAA", ""},
		{"//cdn.example.com/key.jpg", ""},
		{"https://user@cdn.example.com/key.jpg", ""},
		{"", ""},
	} {
		if got := headerImage(tc.in); got != tc.want {
			t.Errorf("headerImage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestContentSecurityPolicy(t *testing.T) {
	page := render(t, samplePage())
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSP meta element")
	}
	csp := html.UnescapeString(m[1])
	style := regexp.MustCompile(`<style>(.*?)</style>`).FindStringSubmatch(page)
	if style == nil {
		t.Fatal("no accent style block")
	}
	sum := sha256.Sum256([]byte(style[1]))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	for _, want := range []string{
		"default-src 'none'",
		"script-src 'self' https://queue.example.com;",
		"connect-src 'self' https://queue.example.com wss://queue.example.com;",
		"img-src 'self' https://queue.example.com data: https://cdn.example.com;",
		hash,
	} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
}

func TestRenderEmbed(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderEmbed(&buf, Embed{Slug: `x"</script><script>alert(1)//` + "\u2028", BaseURL: "https://queue.example.com/"}); err != nil {
		t.Fatal(err)
	}
	js := buf.String()
	want := `var config = {"slug":"x\"\u003c/script\u003e\u003cscript\u003ealert(1)//\u2028","base":"https://queue.example.com"};`
	if !strings.Contains(js, want) {
		t.Errorf("embed.js lacks the encoded config %s", want)
	}
	if strings.Contains(js, "</script>") || strings.Contains(js, "\u2028") {
		t.Error("embed.js contains a raw </script> or U+2028")
	}

	buf.Reset()
	if err := RenderEmbed(&buf, Embed{Slug: "summer-fest", BaseURL: "https://queue.example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"slug":"summer-fest"`, `"base":"https://queue.example.com"`, "aditus_queue_token", "sessionStorage", "function call(url, method, body, timeoutMs)", "function withoutParam(href, name)"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("embed.js lacks %q", w)
		}
	}
	if regexp.MustCompile(`(?m)^\s*(export|import)\b`).MatchString(buf.String()) {
		t.Error("embed.js, a classic script, has an import or export")
	}
}

// TestScriptsParse runs node --check over every script the browser gets,
// when node is installed.
func TestScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	var embed bytes.Buffer
	if err := RenderEmbed(&embed, Embed{Slug: "s", BaseURL: "https://q.example.com"}); err != nil {
		t.Fatal(err)
	}
	scripts := map[string][]byte{"embed.js": embed.Bytes()}
	for name, a := range assets {
		if strings.HasSuffix(name, ".js") {
			scripts[name] = a.body
		}
	}
	for name, body := range scripts {
		if regexp.MustCompile(`(?m)^(import|export) `).Match(body) {
			name = strings.TrimSuffix(name, ".js") + ".mjs" // node checks it as a module
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", path).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, out)
		}
	}
}

func TestAssets(t *testing.T) {
	h := Assets()
	get := func(method, target string, header http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		name, target, contentType string
	}{
		{"script", "/queue/assets/room.js", "text/javascript; charset=utf-8"},
		{"module", "/queue/assets/render.js", "text/javascript; charset=utf-8"},
		{"fallback", "/queue/assets/nomodule.js", "text/javascript; charset=utf-8"},
		{"worker", "/queue/assets/pow-worker.js", "text/javascript; charset=utf-8"},
		{"style", "/queue/assets/room.css", "text/css; charset=utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(http.MethodGet, tc.target, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d, want 200", tc.target, rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := rec.Header().Get("Cache-Control"); got != "public, max-age=300" {
				t.Errorf("unversioned Cache-Control = %q", got)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin = %q, want * (module scripts load with CORS)", got)
			}
			name := strings.TrimPrefix(tc.target, AssetsPrefix)
			versioned := get(http.MethodGet, assetURL("", name), nil)
			if got := versioned.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("versioned Cache-Control = %q", got)
			}
			etag := rec.Header().Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			if again := get(http.MethodGet, tc.target, http.Header{"If-None-Match": {etag}}); again.Code != http.StatusNotModified {
				t.Errorf("If-None-Match = %d, want 304", again.Code)
			}
			if head := get(http.MethodHead, tc.target, nil); head.Code != http.StatusOK || head.Body.Len() != 0 {
				t.Errorf("HEAD = %d with %d bytes", head.Code, head.Body.Len())
			}
		})
	}
	for _, target := range []string{"/queue/assets/", "/queue/assets/missing.js", "/queue/assets/../assets.go", "/queue/assets/static/room.js", "/other/room.js"} {
		if rec := get(http.MethodGet, target, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", target, rec.Code)
		}
	}
	if rec := get(http.MethodPost, "/queue/assets/room.js", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d, want 405", rec.Code)
	}
}

// TestAssetVersionedNames checks the version in a file's name: the
// current one is the file, cached for a year; another one is the current
// file for five minutes; ?v= still works.
func TestAssetVersionedNames(t *testing.T) {
	get := func(target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		Assets().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		return rec
	}
	for name, a := range assets {
		for target, cache := range map[string]string{
			assetURL("", name):                                     "public, max-age=31536000, immutable",
			AssetsPrefix + name + "?v=" + a.version:                "public, max-age=31536000, immutable",
			AssetsPrefix + versionedName(name, "0000000000000000"): "public, max-age=300",
		} {
			rec := get(target)
			if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != cache || rec.Body.String() != string(a.body) {
				t.Errorf("GET %s: %d, Cache-Control %q, want %s and the file", target, rec.Code, rec.Header().Get("Cache-Control"), cache)
			}
		}
	}
	if rec := get(AssetsPrefix + "room.0123456789abcdef.css.js"); rec.Code != http.StatusNotFound {
		t.Errorf("a made-up name: %d, want 404", rec.Code)
	}
}

// TestRoomScriptMessages checks that every t.<key> the page's scripts
// read exists in the catalogue, so a missing translation cannot render as
// "undefined".
func TestRoomScriptMessages(t *testing.T) {
	keys := map[string]bool{}
	typ := reflect.TypeOf(messages{})
	for i := 0; i < typ.NumField(); i++ {
		keys[typ.Field(i).Tag.Get("json")] = true
	}
	uses := regexp.MustCompile(`\bt\.(\w+)`)
	var used [][]string
	for name, a := range assets {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, m := range uses.FindAllStringSubmatch(string(a.body), -1) {
			used = append(used, []string{name, m[1]})
		}
	}
	if len(used) < 10 {
		t.Fatalf("found only %d message uses in the page's scripts", len(used))
	}
	for _, u := range used {
		if !keys[u[1]] {
			t.Errorf("%s uses t.%s, which the catalogue lacks", u[0], u[1])
		}
	}
	if !strings.Contains(string(assets["nomodule.js"].body), ".i18n.oldBrowser") || !keys["oldBrowser"] {
		t.Error("nomodule.js does not read i18n.oldBrowser from the catalogue")
	}
}

// TestModuleImports checks that every module the page loads is served
// with each import pinned to the imported file's current version, so the
// set is cached as one: no import escapes the rewrite, and following the
// imports from room.js reaches each module once, versioned.
func TestModuleImports(t *testing.T) {
	from := regexp.MustCompile(`(?m)\bfrom\s+'([^']*)'`)
	seen := map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		a, ok := assets[name]
		if !ok {
			t.Fatalf("module %s is not served", name)
		}
		for _, m := range from.FindAllStringSubmatch(string(a.body), -1) {
			g := versioned.FindStringSubmatch(strings.TrimPrefix(m[1], "./"))
			if g == nil || !strings.HasPrefix(m[1], "./") {
				t.Errorf("%s imports %q, want ./<file>.<version>.js", name, m[1])
				continue
			}
			dep, version := g[1]+g[3], g[2]
			if got := assets[dep].version; got != version {
				t.Errorf("%s imports %s at version %q, want %q", name, dep, version, got)
			}
			walk(dep)
		}
	}
	walk("room.js")
	for _, want := range []string{"http.js", "i18n.js", "pow.js", "connection.js", "render.js", "state.js"} {
		if !seen[want] {
			t.Errorf("room.js does not reach %s", want)
		}
	}
	if strings.Contains(string(assets["nomodule.js"].body), "import ") {
		t.Error("nomodule.js, a classic script, imports")
	}
}

func TestLoadAssetRefusesBrokenImports(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  map[string]string
		want string
	}{
		{"missing", map[string]string{"a.js": "import { x } from './b.js';\n"}, "b.js: imported by static/a.js, not found"},
		{"cycle", map[string]string{"a.js": "import { x } from './b.js';\n", "b.js": "import { y } from './a.js';\n"}, "import cycle [a.js b.js a.js]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := map[string][]byte{}
			for k, v := range tc.raw {
				raw[k] = []byte(v)
			}
			err := loadAsset(map[string]asset{}, raw, "a.js", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// The header policy adds frame-ancestors: the page's own origin and the
// room's domains, nothing a malformed entry could smuggle in.
func TestContentSecurityPolicyFrameAncestors(t *testing.T) {
	p := RoomPage{Slug: "s", Found: true, Domains: []string{"Shop.Example.com.", "*.example.org", "localhost", "evil.com; script-src *", ""}}
	csp := p.ContentSecurityPolicy()
	want := "frame-ancestors 'self' https://shop.example.com https://*.example.org http://localhost:* https://localhost:*"
	if !strings.HasSuffix(csp, "; "+want) {
		t.Fatalf("CSP %q, want it to end with %q", csp, want)
	}
	if strings.Count(csp, "script-src") != 1 {
		t.Fatalf("a domain entry changed the policy: %q", csp)
	}
	if got := (RoomPage{}).ContentSecurityPolicy(); !strings.HasSuffix(got, "; frame-ancestors 'self'") {
		t.Fatalf("no domains: %q", got)
	}
}
