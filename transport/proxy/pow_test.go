package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// powRoom is a full capacity room with pow_auto at 60 arrivals a minute
// and 4 bits, over the fake store and clock: the controller deciding is
// the grain's (capacity.PowCounter).
func powRoom(t *testing.T) *fakeRoom {
	t.Helper()
	f := newFakeRoom(t, `active = 1
      on_store_error = "wait"
      address_budget { burst = 1000 }
      pow_auto {
        arrivals_per_minute = 60
        bits                = 4
      }`)
	f.get("192.0.2.1", "") // takes the only slot
	return f
}

// send is one request from addr with the cookies given ("a=b; c=d").
func (f *fakeRoom) send(addr, cookies string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/testdata/", nil)
	req.Host, req.RemoteAddr = "shop.test", addr+":40000"
	if cookies != "" {
		req.Header.Set("Cookie", cookies)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	return w
}

// flood sends n first requests from n addresses, 10 ms apart.
func (f *fakeRoom) flood(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		f.now = f.now.Add(10 * time.Millisecond)
		if w := f.send(fmt.Sprintf("198.51.%d.%d", i/250, 1+i%250), ""); w.Code != 503 {
			t.Fatalf("flood request %d: %d", i, w.Code)
		}
	}
}

var challengeRE = regexp.MustCompile(`data-challenge="([^"]+)" data-bits="(\d+)" data-cookie="([^"]+)"`)

// challenged returns the challenge, bits and cookie name of a challenge
// page, or fails.
func challenged(t *testing.T, w *httptest.ResponseRecorder) (challenge string, bits int, cookie string) {
	t.Helper()
	m := challengeRE.FindStringSubmatch(w.Body.String())
	if w.Code != 503 || m == nil {
		t.Fatalf("want a challenge page, got %d: %.300s", w.Code, w.Body.String())
	}
	fmt.Sscan(m[2], &bits)
	return m[1], bits, m[3]
}

func cookieOf(w *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range w.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestGatePowAuto: a flood of first requests from many addresses turns
// proof of work on; a new arrival then gets a challenge page instead of a
// place, and its solution, sent back in the cookie, gives it a place; a
// solution is good once, for this room, at the bits in force; visitors
// who already had a cookie are never asked; the work is lifted when calm.
func TestGatePowAuto(t *testing.T) {
	f := powRoom(t)
	_, before := f.get("192.0.2.2", "")
	_, before = f.get("192.0.2.2", before) // a real place, 1
	if w := f.send("192.0.2.3", ""); strings.Contains(w.Body.String(), "data-challenge") {
		t.Fatal("a challenge before any flood")
	}
	// 100 arrivals a second is over 60 a minute: the work turns on within
	// the controller's window.
	f.flood(t, 100)
	if got := metric(t, f.h, "aditus_queue_proxy_pow_bits"); got < 4 {
		t.Fatalf("pow bits %v after the flood, want at least 4", got)
	}
	w := f.send("192.0.2.9", "")
	ch, bits, name := challenged(t, w)
	if cookieOf(w, "aq_"+f.h.gates[0].id[1:13]) != nil {
		t.Fatal("a challenge page set the visitor cookie: it would be a place without the work")
	}
	checks := f.store.checks
	// A visitor who came before the flood keeps the place, unasked.
	if w, _ := f.get("192.0.2.2", before); place(t, w) != "1" {
		t.Fatalf("a visitor from before the flood is at %q, want 1", place(t, w))
	}
	checks = f.store.checks - checks
	if checks > 1 { // 0: answered from the room's last answer to it
		t.Fatalf("a known visitor made %d store calls", checks)
	}

	// A wrong nonce, a challenge of another room, and a solution of fewer
	// bits than in force are answered with a fresh challenge.
	bad := []string{
		ch + ".not-a-nonce",
		strings.Repeat("A", len(ch)) + "." + room.SolvePow(strings.Repeat("A", len(ch)), bits),
		"garbage",
	}
	for _, sol := range bad {
		if w := f.send("192.0.2.9", name+"="+sol); cookieOf(w, "aq_"+f.h.gates[0].id[1:13]) != nil {
			t.Fatalf("solution %q gave a place", sol)
		} else {
			challenged(t, w)
		}
	}
	sol := ch + "." + room.SolvePow(ch, bits)
	w = f.send("192.0.2.9", name+"="+sol)
	vc := cookieOf(w, "aq_"+f.h.gates[0].id[1:13])
	if vc == nil || w.Code != 503 || !strings.HasPrefix(place(t, w), "about") {
		t.Fatalf("solved: %d %v %.200s", w.Code, vc, w.Body.String())
	}
	if c := cookieOf(w, name); c == nil || c.MaxAge >= 0 {
		t.Fatal("the solution's cookie is not cleared")
	}
	f.now = f.now.Add(5 * time.Second)
	if w, _ := f.get("192.0.2.9", vc.Name+"="+vc.Value); place(t, w) != "2" {
		t.Fatalf("the visitor who solved is at %q, want 2", place(t, w))
	}
	// Spent: the same solution again, as a cookie-dropping client would
	// send it, gets a challenge.
	challenged(t, f.send("192.0.2.10", name+"="+sol))
	if got := metric(t, f.h, "aditus_queue_proxy_pow_challenges_total"); got < 5 {
		t.Fatalf("challenges counted %v, want at least 5", got)
	}

	// Calm: after room.CalmFor below half the threshold (the proxy's
	// batches every second keep the controller informed), the work is
	// lifted and a first request is given a place again (the room is
	// empty by then: it is let in).
	for range 40 {
		f.now = f.now.Add(time.Second)
		f.h.gates[0].flush(t.Context())
	}
	if got := metric(t, f.h, "aditus_queue_proxy_pow_bits"); got != 0 {
		t.Fatalf("pow bits %v after 40 calm seconds, want 0", got)
	}
	if w, c := f.get("192.0.2.11", ""); c == "" || w.Code != 200 {
		t.Fatalf("a first request after the calm: %d %.200s", w.Code, w.Body.String())
	}
}

// TestGatePowStaysOnWhileChallenged: challenge pages count as arrivals,
// reported with the batches, so the work stays on while a flood goes on
// even though the flood no longer reaches the room.
func TestGatePowStaysOnWhileChallenged(t *testing.T) {
	f := powRoom(t)
	f.flood(t, 100)
	g := f.h.gates[0]
	for range 60 {
		for i := range 5 {
			f.now = f.now.Add(200 * time.Millisecond)
			challenged(t, f.send(fmt.Sprintf("203.0.113.%d", 1+i), ""))
		}
		g.flush(t.Context())
	}
	if got := metric(t, f.h, "aditus_queue_proxy_pow_bits"); got < 4 {
		t.Fatalf("pow bits %v after a minute of challenged flood, want at least 4", got)
	}
}

// TestGatePowBudgetFirst: an address over its budget is refused before any
// challenge, and its refusals are not arrivals: one address alone does not
// keep proof of work on for everyone.
func TestGatePowBudgetFirst(t *testing.T) {
	f := newFakeRoom(t, `active = 1
      on_store_error = "wait"
      address_budget {
        per_minute = 1
        burst      = 200
      }
      pow_auto {
        arrivals_per_minute = 60
        bits                = 4
      }`)
	f.get("192.0.2.1", "")
	f.flood(t, 100) // from 100 addresses: the work turns on
	g := f.h.gates[0]
	for i := range 300 { // one address, past its burst of 200
		f.now = f.now.Add(10 * time.Millisecond)
		w := f.send("203.0.113.1", "")
		if asked := strings.Contains(w.Body.String(), "data-challenge"); asked != (i < 200) {
			t.Fatalf("request %d of one address: challenged %v, want %v", i, asked, i < 200)
		}
	}
	// The flooder goes on past its budget for 40 s: refused, not counted;
	// the work is lifted.
	for range 40 {
		for range 100 {
			f.now = f.now.Add(10 * time.Millisecond)
			if w := f.send("203.0.113.1", ""); w.Code != 503 || place(t, w) != "…" {
				t.Fatalf("over budget: %d %q", w.Code, place(t, w))
			}
		}
		g.flush(t.Context())
	}
	if got := metric(t, f.h, "aditus_queue_proxy_pow_bits"); got != 0 {
		t.Fatalf("pow bits %v while only one address over its budget sends, want 0", got)
	}
}
