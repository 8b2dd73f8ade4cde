package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func newServer(t *testing.T) *echo.Echo {
	t.Helper()
	c, err := New(Config{PublicURL: "https://queue.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	c.Register(e)
	return e
}

func get(e *echo.Echo, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestIndexServesWithCSP(t *testing.T) {
	e := newServer(t)
	for _, tc := range []struct {
		name, accept, lang string
	}{
		{"english by default", "", "en"},
		{"german when preferred", "de-AT,de;q=0.9,en;q=0.5", "de"},
		{"english when preferred", "en-US,de;q=0.3", "en"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(e, "/admin/", map[string]string{"Accept-Language": tc.accept})
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			h := rec.Header()
			if got := h.Get("Content-Security-Policy"); got != CSP {
				t.Errorf("CSP = %q, want %q", got, CSP)
			}
			for _, want := range []string{"script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(CSP, want) {
					t.Errorf("CSP lacks %q", want)
				}
			}
			if strings.Contains(CSP, "unsafe-inline") || strings.Contains(CSP, "unsafe-eval") {
				t.Errorf("CSP allows inline code: %q", CSP)
			}
			if got := h.Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("X-Frame-Options = %q", got)
			}
			if got := h.Get("Content-Type"); !strings.HasPrefix(got, "text/html") {
				t.Errorf("Content-Type = %q", got)
			}
			body := rec.Body.String()
			if !strings.Contains(body, `<html lang="`+tc.lang+`">`) {
				t.Errorf("page is not in %q: %.80s", tc.lang, body)
			}
			if !strings.Contains(body, `content="https://queue.example.com"`) {
				t.Error("page lacks the public URL")
			}
		})
	}
}

func TestAdminRedirects(t *testing.T) {
	rec := get(newServer(t), "/admin", nil)
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/admin/" {
		t.Fatalf("got %d %q, want 301 to /admin/", rec.Code, rec.Header().Get("Location"))
	}
}

var (
	attrRE   = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	importRE = regexp.MustCompile(`(?m)^import .* from '(\./[^']+)';`)
)

// TestEveryAssetExists follows the page's src and href attributes and the
// modules' imports, and fetches each one through the server.
func TestEveryAssetExists(t *testing.T) {
	e := newServer(t)
	page := get(e, "/admin/", nil).Body.String()
	queue := []string{}
	for _, m := range attrRE.FindAllStringSubmatch(page, -1) {
		if strings.HasPrefix(m[1], "/admin/") {
			queue = append(queue, m[1])
		}
	}
	if len(queue) < 4 {
		t.Fatalf("found only %v in the page", queue)
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		rec := get(e, u, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d, want 200", u, rec.Code)
			continue
		}
		if rec.Header().Get("Content-Security-Policy") != CSP {
			t.Errorf("%s: no CSP header", u)
		}
		if strings.HasSuffix(u, ".js") {
			if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, "javascript") {
				t.Errorf("%s: Content-Type %q", u, ct)
			}
			for _, m := range importRE.FindAllStringSubmatch(rec.Body.String(), -1) {
				queue = append(queue, path.Join(path.Dir(u), m[1]))
			}
		}
	}
	if !seen["/admin/js/live.js"] || !seen["/admin/vendor/uplot.min.js"] {
		t.Errorf("did not reach every module: %v", seen)
	}
}

func TestNoInlineCodeInThePage(t *testing.T) {
	page := get(newServer(t), "/admin/", nil).Body.String()
	if regexp.MustCompile(`<script(?:\s+type="module")?>`).MatchString(page) || strings.Contains(page, "<style") ||
		strings.Contains(page, " style=") || regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Error("the page carries inline script or style, which the CSP refuses")
	}
}

func TestUnknownAssetIsNotFound(t *testing.T) {
	e := newServer(t)
	for _, p := range []string{"/admin/nope.js", "/admin/js/", "/admin/vendor", "/admin/index.html", "/admin/../console.go"} {
		if rec := get(e, p, nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, rec.Code)
		}
	}
}

// HEAD answers like GET without the body, through a real HTTP server (the
// server, not the handler, drops the body).
func TestHeadAnswersLikeGet(t *testing.T) {
	srv := httptest.NewServer(newServer(t))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		path string
		code int
	}{{"/admin/", 200}, {"/admin/js/live.js", 200}, {"/admin", 301}, {"/admin/nope.js", 404}} {
		req, _ := http.NewRequest(http.MethodHead, srv.URL+tc.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || n != 0 {
			t.Errorf("HEAD %s: %d with %d body bytes, want %d and none", tc.path, resp.StatusCode, n, tc.code)
		}
		if tc.code == 200 && resp.Header.Get("Content-Security-Policy") != CSP {
			t.Errorf("HEAD %s: no CSP header", tc.path)
		}
	}
}
