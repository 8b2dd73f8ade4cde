package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// The attack table: request variants that try to reach a guarded path
// by another name, sent on both forwarding paths through a proxy whose
// rooms are full, with an upstream that records what it receives. The
// differential oracle: a request the upstream received must not stand,
// under any reading a common server makes of the path it got (decoded
// once or twice, matrix parameters dropped, `\` as `/`, dot segments and
// doubled slashes resolved), for a path a room guards. A request the
// proxy answers itself (400, 404, 503) reached nobody.

// attackConfig guards /checkout with a room and /admin, on an upstream
// that ignores case, with another; /static/ is a bypass path.
const attackConfig = `host "shop.test" {
  location "/" {
    upstream "%[1]s" {}
    rule "checkout" {
      and {
        path { prefix = "/checkout" }
      }
      then {
        waiting_room {
          name = "checkout"
          active = 1
          on_store_error = "wait"
          session = "1h"
          address_budget {
            per_minute = 6000000
            burst = 10000000
          }
        }
      }
    }
    rule "static" {
      bypass {
        paths = ["/static/"]
      }
    }
  }
  location "/admin" {
    upstream "%[1]s" {}
    case_insensitive = true
    waiting_room {
      active = 1
      on_store_error = "wait"
      session = "1h"
      address_budget {
        per_minute = 6000000
        burst = 10000000
      }
    }
  }
}`

// guarded is the oracle's own reading of the configuration on a path a
// server resolved: independent of the proxy's code.
func guarded(p string) bool {
	if strings.HasPrefix(strings.ToLower(p), "/admin") {
		return true
	}
	return strings.HasPrefix(p, "/checkout") && !strings.HasPrefix(p, "/static/")
}

// readings are the paths common servers make of an escaped path: decoded
// once (nginx, Apache), twice (a server that decodes again), without
// matrix parameters (Tomcat, Jetty), with `\` as `/` (IIS), each with dot
// segments and doubled slashes resolved.
func readings(escaped string) []string {
	var out []string
	add := func(p string, err error) {
		if err == nil {
			out = append(out, path.Clean("/"+p))
		}
	}
	once, err := url.PathUnescape(escaped)
	add(once, err)
	if err == nil {
		add(url.PathUnescape(once))
		add(strings.ReplaceAll(once, `\`, "/"), nil)
	}
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	add(url.PathUnescape(strings.Join(segs, "/")))
	return out
}

// attackEnv is the proxy in front of a recording upstream on both
// forwarding paths, with the rooms full.
type attackEnv struct {
	handlers map[string]http.Handler
	// wire are the proxies served by fasthttp's server, by name: their
	// requests are sent as raw bytes.
	wire map[string]string
}

func newAttackEnv(t testing.TB) *attackEnv {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Upstream", "1")
		json.NewEncoder(w).Encode(seen{URI: r.RequestURI, Host: r.Host, Header: r.Header})
	}))
	t.Cleanup(up.Close)
	cfg, err := Parse("attack.hcl", []byte(fmt.Sprintf(attackConfig, strings.TrimPrefix(up.URL, "http://"))))
	if err != nil {
		t.Fatal(err)
	}
	e := &attackEnv{handlers: map[string]http.Handler{}, wire: map[string]string{}}
	for name, fw := range map[string]Forwarding{"std": ForwardStd, "fast": ForwardFast} {
		h, err := New(cfg, Options{Store: &tableStore{tables: map[string]*capacity.Table{}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Forwarding: fw})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		for _, p := range []string{"/checkout", "/admin"} {
			fill(t, h, p)
		}
		e.handlers[name] = h
		addr, stop := startFast(h)
		t.Cleanup(stop)
		e.wire["fasthttp/"+name] = addr
	}
	return e
}

// attackServers are the names of the table's proxies: the handler on
// each forwarding path, and the same behind fasthttp's server.
var attackServers = []string{"std", "fast", "fasthttp/std", "fasthttp/fast"}

// fill takes the room's one slot for a visitor who keeps the cookie.
func fill(t testing.TB, h http.Handler, p string) {
	t.Helper()
	var cookies []*http.Cookie
	for range 2 {
		r := httptest.NewRequest("GET", "http://shop.test"+p, nil)
		r.RequestURI = p
		for _, c := range cookies {
			r.AddCookie(c)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("filling %s: %d", p, w.Code)
		}
		cookies = w.Result().Cookies()
	}
	r := httptest.NewRequest("GET", "http://shop.test"+p, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s after filling: %d, want 503", p, w.Code)
	}
}

// send reads raw as a server would and serves it; ok is false when no
// server would have read it.
func (e *attackEnv) send(name, raw string) (w *httptest.ResponseRecorder, ok bool) {
	if addr, ok := e.wire[name]; ok {
		return sendWire(addr, raw)
	}
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return nil, false
	}
	r.RemoteAddr = "192.0.2.1:4711"
	w = httptest.NewRecorder()
	e.handlers[name].ServeHTTP(w, r)
	return w, true
}

// sendWire sends raw to the server at addr and returns its answer; ok is
// false when none came.
func sendWire(addr, raw string) (*httptest.ResponseRecorder, bool) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		return nil, false
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	w := httptest.NewRecorder()
	maps.Copy(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(w, res.Body)
	return w, true
}

// check applies the oracle to one answer, and returns the decision:
// "upstream", or the proxy's own status.
func check(t testing.TB, raw string, w *httptest.ResponseRecorder) string {
	t.Helper()
	if w.Header().Get("X-Upstream") == "" {
		return fmt.Sprint(w.Code)
	}
	var s seen
	if err := json.NewDecoder(w.Body).Decode(&s); err != nil {
		t.Fatalf("%q: upstream answer: %v", raw, err)
	}
	p, _, _ := strings.Cut(s.URI, "?")
	for _, rd := range readings(p) {
		if guarded(rd) {
			t.Errorf("%q reached the upstream as %q, which a server reads as %q: a room guards it", raw, s.URI, rd)
			break
		}
	}
	for _, k := range pathOverrides {
		if v := s.Header.Get(k); v != "" {
			t.Errorf("%q reached the upstream with %s: %q", raw, k, v)
		}
	}
	// The client is no trusted proxy: its own forwarding claims never
	// reach the upstream.
	if xfh, xfp := s.Header.Get("X-Forwarded-Host"), s.Header.Get("X-Forwarded-Proto"); xfh == "other.test" || xfp != "http" {
		t.Errorf("%q reached the upstream with X-Forwarded-Host %q, X-Forwarded-Proto %q", raw, xfh, xfp)
	}
	return "upstream"
}

// aliasPaths are names of guarded and open paths.
var aliasPaths = []string{
	"/checkout", "//checkout", "///checkout", "/./checkout", "/checkout/", "/checkout/.", "/checkoutx",
	"/static/../checkout", "/static/%2e%2e/checkout", "/static/%2E%2E/checkout", "/static/.%2e/checkout",
	"/static/%2e./checkout", "/static//../checkout", "/static/./../checkout", "/x/y/../../checkout",
	"/static/x/../../checkout", "/%63heckout", "/%63%68%65%63%6b%6f%75%74", "/check%6Fut", "/checkout/../checkout",
	"/cart/../checkout", "/static/%2e%2e/%63heckout", "/checkout;jsessionid=1", "/checkout;", "/;x/checkout",
	"/static;x/../checkout", "/static/..;/checkout", "/static/%2e%2e;/checkout", "/static/..%2fcheckout",
	"/static/..%2Fcheckout", "/static/..%5ccheckout", `/static/..\checkout`, "/static/%252e%252e/checkout",
	"/static/%25%32%65%25%32%65/checkout", "/checkout%00", "/checkout%2f", "/../checkout", "/static/../../checkout",
	"/checkout%20", "/checkout.", "/checkout%3b", "/checkout%3Bx", "/CHECKOUT", "/CheckOut", "/static/../CHECKOUT",
	"/admin", "/ADMIN", "/Admin/x", "/%61dmin", "//ADMIN", "/static/../aDmIn", "/admin;x", "/adm%69n",
	"/static/", "/static/app.js", "/static/x/../app.js", "/static/%2e%2e/static/app.js", "/cart", "/",
	"/static/caf%c3%a9", "/static/%ff", "/static/100%25", "/checkou%74", "/static/.%2E/.%2e/checkout",
	"/%u0063heckout", "/static/..%c0%afcheckout", "/static/..%e0%80%afcheckout",
}

// attackVariants are the raw requests of the table: each path in origin
// form, with a query, in absolute form, and with Host and forwarding
// header tricks.
func attackVariants() []string {
	var out []string
	for _, p := range aliasPaths {
		out = append(out,
			"GET "+p+" HTTP/1.1\r\nHost: shop.test\r\n\r\n",
			"GET "+p+"?next=/../checkout HTTP/1.1\r\nHost: shop.test\r\n\r\n",
			"GET http://shop.test"+p+" HTTP/1.1\r\nHost: other.test\r\n\r\n",
			"GET "+p+" HTTP/1.1\r\nHost: SHOP.TEST:80\r\nX-Forwarded-Host: other.test\r\nX-Forwarded-Proto: https\r\n\r\n",
			"GET /cart HTTP/1.1\r\nHost: shop.test\r\nX-Original-URL: "+p+"\r\nX-Rewrite-URL: "+p+"\r\n\r\n",
		)
	}
	return out
}

// TestAttackTable runs the table on both forwarding paths, behind the
// handler alone and behind fasthttp's server: no request
// reaches the upstream under a guarded name, and the named aliases of the
// guarded paths are gated or refused, never forwarded.
func TestAttackTable(t *testing.T) {
	e := newAttackEnv(t)
	variants := attackVariants()
	if len(variants) < 200 {
		t.Fatalf("%d variants, want at least 200", len(variants))
	}
	for _, name := range attackServers {
		t.Run(name, func(t *testing.T) {
			count := map[string]int{}
			for _, raw := range variants {
				w, ok := e.send(name, raw)
				if !ok {
					count["unreadable"]++ // Go's server answers 400 itself
					continue
				}
				count[check(t, raw, w)]++
			}
			t.Logf("%d variants: %v", len(variants), count)
			if count["upstream"] == 0 || count["503"] == 0 || count["400"] == 0 {
				t.Errorf("the table no longer tests both sides: %v", count)
			}
			for p, want := range map[string]string{
				"/static/../checkout": "503", "//checkout": "503", "/static/%2e%2e/checkout": "503",
				"/%u0063heckout": "unreadable", "/static/..%c0%afcheckout": "400",
				"/checkout;jsessionid=1": "503", "/ADMIN": "503", "/static/app.js": "upstream",
				"/static/..%2fcheckout": "400", "/static/%252e%252e/checkout": "400", "/../checkout": "400",
				"/CHECKOUT": "upstream", "/cart": "upstream",
			} {
				raw := "GET " + p + " HTTP/1.1\r\nHost: shop.test\r\n\r\n"
				got := "unreadable" // Go's server answers 400 itself
				if w, ok := e.send(name, raw); ok {
					got = check(t, raw, w)
				}
				if got == "400" && want == "unreadable" && e.wire[name] != "" {
					got = want // fasthttp's parser reads it, the proxy refuses it
				}
				if got != want {
					t.Errorf("%s: %s, want %s", p, got, want)
				}
			}
		})
	}
}

// FuzzAttack sends generated paths through both forwarding paths with the
// table's oracle.
func FuzzAttack(f *testing.F) {
	for _, p := range aliasPaths {
		f.Add(p)
	}
	e := newAttackEnv(f)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsAny(p, " \r\n") {
			return // not one request line
		}
		raw := "GET " + p + " HTTP/1.1\r\nHost: shop.test\r\n\r\n"
		for _, name := range attackServers {
			if w, ok := e.send(name, raw); ok {
				check(t, raw, w)
			}
		}
	})
}

// TestStaticFilesOnTheCanonicalPath: a static_files location serves the
// file of the canonical path, a name outside it never, and a location
// path with characters that are encoded on the wire still matches.
func TestStaticFilesOnTheCanonicalPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("file a"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf(`host "shop.test" {
  location "/café/" {
    static_files { directory = %q }
  }
  location "/" {
    upstream "127.0.0.1:1" {}
  }
}`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, Options{Store: &tableStore{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	for target, want := range map[string]string{
		"/caf%C3%A9/a.txt":                "200 file a",
		"/caf%c3%a9/./x/../a.txt":         "200 file a",
		"//caf%C3%A9//a.txt":              "200 file a",
		"/caf%C3%A9/..%2Fcaf%C3%A9/a.txt": "400",
	} {
		r := httptest.NewRequest("GET", "http://shop.test/", nil)
		r.RequestURI = target
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got := fmt.Sprint(w.Code)
		if w.Code == http.StatusOK {
			got += " " + w.Body.String()
		}
		if got != want {
			t.Errorf("%s: %s, want %s", target, got, want)
		}
	}
}
