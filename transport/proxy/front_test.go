package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// echoUpstream answers 200 and tells what forwarding headers reached it.
func echoUpstream(t testing.TB) string {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Seen-XFF", strings.Join(r.Header.Values("X-Forwarded-For"), "|"))
		w.Header().Set("Seen-XFP", strings.Join(r.Header.Values("X-Forwarded-Proto"), "|"))
		io.WriteString(w, "shop")
	}))
	t.Cleanup(up.Close)
	return strings.TrimPrefix(up.URL, "http://")
}

// frontDNS answers one crawler address: 66.249.66.1 is
// crawl-66-249-66-1.googlebot.com and back.
type frontDNS struct{}

func (frontDNS) LookupAddr(_ context.Context, addr string) ([]string, error) {
	if addr == "66.249.66.1" {
		return []string{"crawl-66-249-66-1.googlebot.com."}, nil
	}
	return nil, errors.New("no such host")
}

func (frontDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "crawl-66-249-66-1.googlebot.com." {
		return []netip.Addr{netip.MustParseAddr("66.249.66.1")}, nil
	}
	return nil, errors.New("no such host")
}

// frontHandler is a proxy for host shop.test with one waiting room of
// active slots, the server block given, and rules (HCL) added to its
// location.
func frontHandler(t testing.TB, server, rules string, active int, o Options) *Handler {
	t.Helper()
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf(`%s
host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = %d
      on_store_error = "wait"
      # These tests and the fuzz target send many first requests from
      # one peer: the address budget is not what they check.
      address_budget {
        per_minute = 6000000
        burst      = 10000000
      }
    }
    %s
  }
}`, server, echoUpstream(t), active, rules)))
	if err != nil {
		t.Fatal(err)
	}
	o.Store = &tableStore{tables: map[string]*capacity.Table{}}
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// visit sends one request from peer (host:port) with the headers given as
// name, value pairs; tls marks it as having come over TLS.
func visit(h http.Handler, peer string, tls bool, hdr ...string) *http.Response {
	r := httptest.NewRequest("GET", "http://shop.test/", nil)
	r.RemoteAddr = peer
	if tls {
		r.TLS = tlsState
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

var tlsState = &tls.ConnectionState{}

const trustLB = `server {
  trusted_proxies = ["10.0.0.0/8", "2001:db8:1::/48"]
  cookie_secure   = %s
}`

func TestCookieSecure(t *testing.T) {
	for _, tc := range []struct {
		name, mode, peer string
		tls              bool
		hdr              []string
		want             bool
	}{
		{"auto, plain HTTP", `"auto"`, "10.1.2.3:5000", false, nil, false},
		{"auto, TLS here", `"auto"`, "203.0.113.9:5000", true, nil, true},
		{"auto, TLS at a trusted balancer", `"auto"`, "10.1.2.3:5000", false, []string{"X-Forwarded-Proto", "https"}, true},
		{"auto, TLS at a trusted IPv6 balancer", `"auto"`, "[2001:db8:1::5]:5000", false, []string{"X-Forwarded-Proto", "https"}, true},
		{"auto, a client claiming TLS", `"auto"`, "203.0.113.9:5000", false, []string{"X-Forwarded-Proto", "https"}, false},
		{"auto, balancer says http last", `"auto"`, "10.1.2.3:5000", false, []string{"X-Forwarded-Proto", "https, http"}, false},
		{"true on plain HTTP", "true", "203.0.113.9:5000", false, nil, true},
		{"false over TLS", "false", "203.0.113.9:5000", true, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := frontHandler(t, fmt.Sprintf(trustLB, tc.mode), "", 100, Options{DNS: frontDNS{}})
			res := visit(h, tc.peer, tc.tls, tc.hdr...)
			cs := res.Cookies()
			if res.StatusCode != 200 || len(cs) != 1 {
				t.Fatalf("got %d with %d cookies, want 200 with the visitor's cookie", res.StatusCode, len(cs))
			}
			if cs[0].Secure != tc.want {
				t.Fatalf("Secure %v, want %v", cs[0].Secure, tc.want)
			}
		})
	}
}

// Without a server block, nothing a peer writes is believed: the cookie is
// Secure only over the proxy's own TLS.
func TestCookieSecureDefaultTrustsNoHeader(t *testing.T) {
	h := frontHandler(t, "", "", 100, Options{DNS: frontDNS{}})
	if visit(h, "10.1.2.3:5000", false, "X-Forwarded-Proto", "https").Cookies()[0].Secure {
		t.Fatal("a header made the cookie Secure without trusted proxies")
	}
	if !visit(h, "10.1.2.3:5000", true).Cookies()[0].Secure {
		t.Fatal("a visitor over TLS got a cookie without Secure")
	}
}

// The upstream hears the client chain from trusted balancers only.
func TestForwardingHeadersToUpstream(t *testing.T) {
	h := frontHandler(t, fmt.Sprintf(trustLB, `"auto"`), "", 100, Options{DNS: frontDNS{}})
	for _, tc := range []struct {
		name, peer string
		hdr        []string
		xff, xfp   string
	}{
		{"a client's claims are dropped", "203.0.113.9:5000", []string{"X-Forwarded-For", "198.51.100.7", "X-Forwarded-Proto", "https"}, "203.0.113.9", "http"},
		{"a trusted balancer's chain goes on", "10.1.2.3:5000", []string{"X-Forwarded-For", "198.51.100.7", "X-Forwarded-Proto", "https"}, "198.51.100.7, 10.1.2.3", "https"},
		{"a trusted balancer without headers", "10.1.2.3:5000", nil, "10.1.2.3", "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := visit(h, tc.peer, false, tc.hdr...)
			if xff, xfp := res.Header.Get("Seen-XFF"), res.Header.Get("Seen-XFP"); xff != tc.xff || xfp != tc.xfp {
				t.Fatalf("upstream saw X-Forwarded-For %q, X-Forwarded-Proto %q; want %q, %q", xff, xfp, tc.xff, tc.xfp)
			}
		})
	}
}

const googlebotUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// A crawler's User-Agent skips the line only from an address that is that
// crawler's by DNS; the room here is full, so anyone else waits.
func TestCrawlerBypassIsVerified(t *testing.T) {
	rules := `rule "robots" {
      bypass { user_agents = ["Googlebot"] }
    }`
	h := frontHandler(t, fmt.Sprintf(trustLB, `"auto"`), rules, 1, Options{DNS: frontDNS{}})
	if res := visit(h, "192.0.2.1:5000", false); res.StatusCode != 200 {
		t.Fatalf("first visitor: %d", res.StatusCode)
	}
	for _, tc := range []struct {
		name, peer string
		hdr        []string
		want       int
	}{
		{"Googlebot from Google's address", "66.249.66.1:5000", []string{"User-Agent", googlebotUA}, 200},
		{"Googlebot behind a trusted balancer", "10.1.2.3:5000", []string{"User-Agent", googlebotUA, "X-Forwarded-For", "66.249.66.1"}, 200},
		{"Googlebot from anywhere else", "203.0.113.9:5000", []string{"User-Agent", googlebotUA}, 503},
		{"a client's own X-Forwarded-For", "203.0.113.9:5000", []string{"User-Agent", googlebotUA, "X-Forwarded-For", "66.249.66.1"}, 503},
		{"Google's address without the User-Agent", "66.249.66.1:5000", nil, 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := visit(h, tc.peer, false, tc.hdr...)
			if res.StatusCode != tc.want {
				t.Fatalf("got %d, want %d", res.StatusCode, tc.want)
			}
			if tc.want == 200 && len(res.Cookies()) != 0 {
				t.Fatal("a bypassed crawler was given a visitor cookie")
			}
		})
	}
}

// With the system's own resolver, a "Googlebot" from loopback is what it
// is: localhost, and it waits.
func TestCrawlerBypassWithTheSystemResolver(t *testing.T) {
	rules := `rule "robots" {
      bypass { user_agents = ["Googlebot"] }
    }`
	h := frontHandler(t, "", rules, 1, Options{DNS: net.DefaultResolver})
	visit(h, "192.0.2.1:5000", false)
	if res := visit(h, "127.0.0.1:5000", false, "User-Agent", googlebotUA); res.StatusCode != 503 {
		t.Fatalf("got %d, want 503", res.StatusCode)
	}
}

// unverified = true lets the User-Agent alone through: what it costs is
// that anyone may send it.
func TestUnverifiedBypass(t *testing.T) {
	rules := `rule "monitor" {
      bypass {
        user_agents = ["StatusMonitor"]
        unverified  = true
      }
    }`
	h := frontHandler(t, "", rules, 1, Options{DNS: frontDNS{}})
	visit(h, "192.0.2.1:5000", false)
	if res := visit(h, "203.0.113.9:5000", false, "User-Agent", "StatusMonitor/1.0"); res.StatusCode != 200 {
		t.Fatalf("got %d, want 200", res.StatusCode)
	}
}

// staticRateRooms is one rate room's secret.
type staticRateRooms []byte

func (s staticRateRooms) Secret(context.Context, string) ([]byte, bool, error) { return s, true, nil }

// TestRateRoomReturnURLTrustsOnlyTrustedProxies: a block naming a rate
// room sends a visitor without a token to the room with a return URL whose
// scheme a trusted balancer's X-Forwarded-Proto decides, and nobody
// else's.
func TestRateRoomReturnURLTrustsOnlyTrustedProxies(t *testing.T) {
	cfg, err := Parse("t.hcl", []byte(`server {
  trusted_proxies = ["10.0.0.0/8"]
}
host "shop.test" {
  location "/" {
    upstream "127.0.0.1:1" {}
    waiting_room {
      room           = "launch"
      on_store_error = "wait"
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, Options{Store: &tableStore{}, RateRooms: staticRateRooms("a secret of the rate room, long enough"),
		PublicURL: "https://q.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	for peer, scheme := range map[string]string{"10.1.2.3:5000": "https", "203.0.113.9:5000": "http"} {
		r := httptest.NewRequest("GET", "http://shop.test/a/../tickets", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-Proto", "https")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := "https://q.test/queue/launch/enter?return=" + url.QueryEscape(scheme+"://shop.test/tickets")
		if w.Code != http.StatusFound || w.Header().Get("Location") != want {
			t.Errorf("from %s: %d to %q, want 302 to %q", peer, w.Code, w.Header().Get("Location"), want)
		}
	}
}
