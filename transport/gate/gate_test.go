package gate_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
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
