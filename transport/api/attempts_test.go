package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
)

// attempt sends one bypass-code attempt from client address from (through
// the trusted loopback proxy) by POST /bypass, or by /enter?code= when
// enter is set, and returns the answer without its Date.
func (e *env) attempt(from, code string, enter bool) (int, http.Header, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+"/queue/vip/bypass", strings.NewReader(`{"code":"`+code+`"}`))
	if enter {
		req, _ = http.NewRequest("GET", e.srv.URL+"/queue/vip/enter?code="+code, nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", from)
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	res.Header.Del("Date")
	return res.StatusCode, res.Header, b
}

// Bypass-code attempts are limited per client address: every attempt costs
// the same, valid code or not, on both routes; beyond the budget a valid
// and an invalid code get the same 429 with Retry-After; other addresses
// keep their budget; the budget refills with time.
func TestBypassAttemptsLimitedPerAddress(t *testing.T) {
	clock := newStillClock()
	e := newEnvWith(t, func(d *grain.Deps, c *Config) {
		d.Now, c.Now = clock.Now, clock.Now
		c.Clients = loopbackProxy
	})
	id, _ := e.createRoom("vip", 60)
	st, m, _ := e.do("POST", "/api/admin/queue/sites/"+id+"/bypass-codes", adminTok, map[string]any{"label": "Press"})
	if st != http.StatusCreated {
		t.Fatalf("create code: %d %v", st, m)
	}
	good, bad := m["code"].(string), "AAAAA-BBBBB-CCCCC-DDDDD"

	const guesser = "198.51.100.7"
	for i := 0; i < codeBudget.Burst; i++ {
		code, want := bad, http.StatusNotFound
		if i%2 == 0 {
			code, want = good, http.StatusOK
		}
		enter := i%3 == 0
		if enter {
			want = http.StatusFound // to the shop, or (an invalid code) into the line
		}
		if st, _, b := e.attempt(guesser, code, enter); st != want {
			t.Fatalf("attempt %d (enter %v): got %d %s, want %d", i+1, enter, st, b, want)
		}
	}
	var answers [][]byte
	var retry []string
	for _, tc := range []struct {
		code  string
		enter bool
	}{{good, false}, {bad, false}, {good, true}, {bad, true}} {
		st, h, b := e.attempt(guesser, tc.code, tc.enter)
		if st != http.StatusTooManyRequests {
			t.Fatalf("beyond the budget (enter %v): got %d %s, want 429", tc.enter, st, b)
		}
		answers, retry = append(answers, b), append(retry, h.Get("Retry-After"))
		if h.Get("Cache-Control") != "no-store" {
			t.Fatalf("a 429 without Cache-Control: no-store: %v", h)
		}
	}
	for i := range answers {
		if !bytes.Equal(answers[i], answers[0]) || retry[i] != "6" {
			t.Fatalf("answers beyond the budget differ: %q Retry-After %q, want %q and 6", answers[i], retry[i], answers[0])
		}
	}
	if !bytes.Contains(answers[0], []byte(`"error":"rate_limited"`)) {
		t.Fatalf("429 body %s", answers[0])
	}
	// A browser following the gateway link gets a page saying so, the
	// same for a valid and an invalid code.
	var pages [][]byte
	for _, code := range []string{good, bad} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/queue/vip/enter?code="+code, nil)
		req.Header.Set("Accept", browserAccept)
		req.Header.Set("X-Forwarded-For", guesser)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusTooManyRequests || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			res.Header.Get("Retry-After") != "6" || !bytes.Contains(b, []byte("Too many code attempts")) {
			t.Fatalf("a browser beyond the budget: %d %v\n%s", res.StatusCode, res.Header, b)
		}
		pages = append(pages, b)
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Fatal("the page beyond the budget differs for a valid and an invalid code")
	}
	// Another address (its own /64 for IPv6) is not held up.
	for _, other := range []string{"198.51.100.8", "2001:db8:1:2::1"} {
		if st, _, b := e.attempt(other, good, false); st != http.StatusOK {
			t.Fatalf("from %s: got %d %s", other, st, b)
		}
	}
	// An address the guesser writes left of the one the trusted proxy
	// appended does not choose the budget.
	if st, _, _ := e.attempt("203.0.113.1, "+guesser, good, false); st != http.StatusTooManyRequests {
		t.Fatalf("an address written left of the proxy's chose the budget: %d", st)
	}
	clock.Advance(6 * time.Second)
	if st, _, b := e.attempt(guesser, good, false); st != http.StatusOK {
		t.Fatalf("after Retry-After: got %d %s", st, b)
	}
}
