package gate_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/gate"
	"github.com/aditus-queue/aditus-queue/transport/returnurl"
)

// The table of every gate against real runtimes is in deploy/edge; these
// are the package's own cases.

func TestNewRefusesBadConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name         string
		slug, secret string
		room         string
		opts         []gate.Option
	}{
		{"short secret", "a", "fifteen bytes..", "https://q.example/queue/a", nil},
		{"no slug", "", "a secret of 32 bytes, long enough", "https://q.example/queue/a", nil},
		{"no secret", "a", "", "https://q.example/queue/a", nil},
		{"relative room", "a", "a secret of 32 bytes, long enough", "/queue/a", nil},
		{"room with query", "a", "a secret of 32 bytes, long enough", "https://q.example/queue/a?x=1", nil},
		{"room not http", "a", "a secret of 32 bytes, long enough", "ftp://q.example/queue/a", nil},
		{"bad cookie", "a", "a secret of 32 bytes, long enough", "https://q.example/queue/a", []gate.Option{gate.WithCookie("a;b")}},
		{"origin with path", "a", "a secret of 32 bytes, long enough", "https://q.example/queue/a", []gate.Option{gate.WithOrigin("https://shop.example/x")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := gate.New(tc.slug, []byte(tc.secret), tc.room, tc.opts...); err == nil {
				t.Fatalf("New accepted %s", tc.name)
			}
		})
	}
}

func TestCookieLivesAsLongAsTheToken(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	secret := []byte("the room secret, long enough")
	g, err := gate.New("sale", secret, "https://q.example/queue/sale",
		gate.WithClock(func() time.Time { return now }), gate.WithCookie("pass"))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := token.Mint(secret, "sale", 3, false, now.Add(-4*time.Minute), 10*time.Minute)
	w := httptest.NewRecorder()
	g.Wrap(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", "/a?x=1&aditus_queue_token="+tok+"&y=2", nil))
	if w.Code != http.StatusFound || w.Header().Get("Location") != "/a?x=1&y=2" {
		t.Fatalf("got %d %q, want 302 /a?x=1&y=2", w.Code, w.Header().Get("Location"))
	}
	ck := w.Result().Cookies()
	if len(ck) != 1 || ck[0].Name != "pass" || ck[0].MaxAge != 360 || !ck[0].Secure || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteLaxMode {
		t.Fatalf("got cookie %+v, want pass, Max-Age 360, Secure, HttpOnly, SameSite=Lax", ck)
	}
}

func TestReturnURLPassesTheRoomsCheck(t *testing.T) {
	g, err := gate.New("sale", []byte("the room secret, long enough"), "https://q.example/queue/sale", gate.WithOrigin("https://shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://internal:8080/event/42?seat=a%20b&aditus_queue_token=junk", nil)
	loc := g.RoomURL(r)
	ret, ok := strings.CutPrefix(loc, "https://q.example/queue/sale/enter?return=")
	if !ok {
		t.Fatalf("got %q, want the room's /enter", loc)
	}
	req := httptest.NewRequest("GET", "/?return="+ret, nil)
	u, ok := returnurl.Check(req.URL.Query().Get("return"), []string{"shop.example.com"})
	if !ok || u.String() != "https://shop.example.com/event/42?seat=a%20b" {
		t.Fatalf("got %v %v, want the page asked for without the token, accepted", u, ok)
	}
}

// TestForwardingHeadersOnlyFromTrustedProxies: the return URL's scheme and
// host come from X-Forwarded-Proto and X-Forwarded-Host only when a trusted
// proxy sent them, and the next handler never sees another peer's.
func TestForwardingHeadersOnlyFromTrustedProxies(t *testing.T) {
	secret := []byte("the room secret, long enough")
	trusted, err := clientaddr.ParsePrefixes([]string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New("sale", secret, "https://q.example/queue/sale", gate.WithTrustedProxies(trusted))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := token.Mint(secret, "sale", 3, false, time.Now(), 10*time.Minute)
	for _, tc := range []struct {
		peer, wantReturn, wantXFF string
	}{
		{"203.0.113.9:4000", "http://shop.test/a", ""},
		{"10.1.2.3:4000", "https://shop.example.com/a", "198.51.100.7"},
	} {
		r := httptest.NewRequest("GET", "http://shop.test/a", nil)
		r.RemoteAddr = tc.peer
		r.Header.Set("X-Forwarded-Proto", "https")
		r.Header.Set("X-Forwarded-Host", "shop.example.com")
		r.Header.Set("X-Forwarded-For", "198.51.100.7")
		w := httptest.NewRecorder()
		g.Wrap(http.NotFoundHandler()).ServeHTTP(w, r)
		want := "https://q.example/queue/sale/enter?return=" + url.QueryEscape(tc.wantReturn)
		if got := w.Header().Get("Location"); got != want {
			t.Errorf("from %s: sent to %q, want %q", tc.peer, got, want)
		}
		r.AddCookie(&http.Cookie{Name: gate.DefaultCookie, Value: tok})
		var xff string
		g.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			xff = r.Header.Get("X-Forwarded-For")
		})).ServeHTTP(httptest.NewRecorder(), r)
		if xff != tc.wantXFF {
			t.Errorf("from %s: the shop saw X-Forwarded-For %q, want %q", tc.peer, xff, tc.wantXFF)
		}
	}
}

// TestCanonicalPath: the shop behind the gate and the return URL see the
// canonical path; a path without one is refused.
func TestCanonicalPath(t *testing.T) {
	secret := []byte("the room secret, long enough")
	g, err := gate.New("sale", secret, "https://q.example/queue/sale", gate.WithOrigin("https://shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := token.Mint(secret, "sale", 3, false, time.Now(), 10*time.Minute)
	var got string
	h := g.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.URL.EscapedPath() + " " + r.RequestURI }))
	for _, tc := range []struct{ target, want string }{
		{"/static/../checkout?x=1", "/checkout /checkout?x=1"},
		{"//checkout", "/checkout /checkout"},
		{"/static/%2e%2e/check%6Fut;j=1", "/checkout;j=1 /checkout;j=1"},
		{"/static/..%2Fcheckout", "400"},
		{"/%252e%252e/checkout", "400"},
	} {
		got = ""
		r := httptest.NewRequest("GET", tc.target, nil)
		r.AddCookie(&http.Cookie{Name: gate.DefaultCookie, Value: tok})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusBadRequest {
			got = "400"
		}
		if got != tc.want {
			t.Errorf("%s: the shop saw %q, want %q", tc.target, got, tc.want)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/x/../event/42", nil))
	if want := "https://q.example/queue/sale/enter?return=" + url.QueryEscape("https://shop.example.com/event/42"); w.Header().Get("Location") != want {
		t.Errorf("sent to %q, want %q", w.Header().Get("Location"), want)
	}
}
