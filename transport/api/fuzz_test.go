package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/transport/web"
)

// The fuzz targets of the HTTP front's parsers of outside input (beside
// FuzzQueryValue in answer_test.go): bypass codes as people type them, and every
// visitor and admin request body and query through the real server. Their
// seed corpora run as ordinary tests; deploy/local/fuzz.sh fuzzes each for
// a few seconds.

// FuzzNormalizeCode: a code is read the same however it is typed (case,
// spaces around), and normalising is idempotent.
func FuzzNormalizeCode(f *testing.F) {
	for _, s := range []string{"ABCDE-FGHIJ-KLMNO-PQRST", " abcde-fghij-klmno-pqrst\n", "", "ß", "\u0131", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		n := normalizeCode(code)
		if normalizeCode(n) != n {
			t.Fatalf("normalizeCode(%q) = %q is not a fixed point", code, n)
		}
		if normalizeCode(" "+strings.ToLower(code)+"\t") != normalizeCode(strings.ToUpper(code)) && isASCII(code) {
			t.Fatalf("%q reads differently in lower and upper case", code)
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// fuzzRoutes are the requests FuzzRequests sends: a method and path, and
// whether the fuzzed text goes into the body or the query.
var fuzzRoutes = []struct {
	method, path string
	query, admin bool
}{
	{"POST", "/queue/open/join", false, false},
	{"POST", "/queue/pow/join", false, false},
	{"POST", "/queue/open/token", false, false},
	{"POST", "/queue/open/heartbeat", false, false},
	{"POST", "/queue/open/bypass", false, false},
	{"GET", "/queue/open/status", true, false},
	{"GET", "/queue/open/verify", true, false},
	{"GET", "/queue/open/enter", true, false},
	{"GET", "/queue/open", true, false},
	{"PATCH", "/api/admin/queue/sites/{patched}", false, true},
	{"POST", "/api/admin/queue/sites/{open}/bypass-codes", false, true},
}

// FuzzRequests sends fuzzed bodies and queries to the visitor and admin
// routes of one real node. Invariants: no answer is a 5xx; every error is
// the contract's JSON {error, message}; every JSON answer parses; a
// redirect leads only to the queue itself or a page of the room's domains.
func FuzzRequests(f *testing.F) {
	srv, ids := fuzzServer(f)
	seeds := []string{"", "{}", "null", "[]", "{", `{"ticket":"x"}`, `{"number":1}`, `{"number":-1}`, `{"number":0}`,
		`{"number":1e99}`, `{"ticket":1}`, `{"code":"ABCDE-FGHIJ-KLMNO-PQRST"}`, `{"code":"` + strings.Repeat("A", 200) + `"}`,
		`{"pow":{"challenge":"x","nonce":"1"}}`, powBody, `{"pow":{"challenge":"{challenge}","nonce":"x{nonce}"}}`,
		`{"pow":{"challenge":"{challenge}","nonce":"{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}{nonce}"}}`, `{"pow":null}`, `{"pow":{"challenge":"","nonce":""}}`,
		`{"slug":"patched","name":"P","ratePerMinute":5,"active":true,"domains":["shop.example.com"]}`,
		`{"name":"P","ratePerMinute":0}`, `{"label":"vip","usageLimit":-1}`, `{"label":"x","expiresAt":"2001-01-01T00:00:00Z"}`,
		"ticket=abc", "number=1", "number=18446744073709551616", "token=a.b.c", "return=https://evil.example/",
		"return=https://shop.example.com/e?aditus_queue_token=x", "code=%20abcde", "return=//evil.example", "return=https://shop.example.com@evil.example/"}
	for i := range fuzzRoutes {
		for _, s := range seeds {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, text string) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := strings.NewReplacer("{patched}", ids["patched"], "{open}", ids["open"]).Replace(rt.path)
		solved := false
		if strings.Contains(text, "{challenge}") {
			// A fresh challenge of this server's room, and its solution,
			// so that mutations explore the checks past the signature.
			ch, nonce := fuzzChallenge(t, srv.URL)
			solved = text == powBody && strings.HasSuffix(path, "/pow/join")
			text = strings.NewReplacer("{challenge}", ch, "{nonce}", nonce).Replace(text)
		}
		var body io.Reader
		if rt.query {
			if strings.IndexFunc(text, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
				return // not a request line: net/http answers it before any handler
			}
			path += "?" + text
		} else {
			body = strings.NewReader(text)
		}
		req, err := http.NewRequest(rt.method, srv.URL+path, body)
		if err != nil {
			return // not a request a client can send
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if rt.admin {
			req.Header.Set("Authorization", "Bearer "+adminTok)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s %s: %v", rt.method, path, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		ct := res.Header.Get("Content-Type")
		if solved && res.StatusCode != http.StatusOK {
			t.Fatalf("a solved challenge: %d %s", res.StatusCode, b)
		}
		switch {
		case res.StatusCode >= 500:
			t.Fatalf("%s %s %q: %d %s", rt.method, path, text, res.StatusCode, b)
		case res.StatusCode >= 300 && res.StatusCode < 400:
			loc, err := url.Parse(res.Header.Get("Location"))
			if err != nil || (loc.Host != "queue.test" && loc.Host != "shop.example.com") || (loc.Scheme != "http" && loc.Scheme != "https") {
				t.Fatalf("%s %s: redirect to %q", rt.method, path, res.Header.Get("Location"))
			}
		case res.StatusCode >= 400:
			var e struct{ Error, Message string }
			if strings.HasPrefix(ct, "text/html") && rt.method == "GET" {
				return // the hosted page's own not-found page
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error == "" || e.Message == "" {
				t.Fatalf("%s %s %q: %d is not a JSON error: %s", rt.method, path, text, res.StatusCode, b)
			}
		case strings.HasPrefix(ct, "application/json") && !json.Valid(b):
			t.Fatalf("%s %s %q: invalid JSON answer %s", rt.method, path, text, b)
		}
	})
}

// powBody is a join body with the placeholders FuzzRequests fills with a
// fresh challenge of the room "pow" and its solution.
const powBody = `{"pow":{"challenge":"{challenge}","nonce":"{nonce}"}}`

// fuzzChallenge fetches a challenge of the room "pow" and solves it.
func fuzzChallenge(t *testing.T, base string) (challenge, nonce string) {
	t.Helper()
	res, err := http.Get(base + "/queue/pow/pow")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a powAnswer
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil || a.Challenge == "" {
		t.Fatalf("challenge: %d %v %+v", res.StatusCode, err, a)
	}
	return a.Challenge, room.SolvePow(a.Challenge, a.Bits)
}

// fuzzServer starts one node (per fuzzing process) with rooms "open"
// (fast, abandon detection on), "pow" (proof of work) and "patched" (the
// one PATCH requests change), and returns its server and the rooms' ids.
func fuzzServer(f *testing.F) (*httptest.Server, map[string]string) {
	f.Helper()
	n, err := node.Start(node.Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Sealer: sealer, Hash: sha, Logger: testLogger()}})
	if err != nil {
		f.Fatal(err)
	}
	s := New(Config{Node: n.Front, PublicURL: "http://queue.test", AdminTokenHash: sha(adminTok), Hash: sha, Logger: testLogger(),
		Registry: prometheus.NewRegistry()})
	srv := httptest.NewServer(s.Handler())
	f.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
	ids := map[string]string{}
	for _, cfg := range []map[string]any{
		{"slug": "open", "ratePerMinute": 600000, "abandon": map[string]any{"enabled": true}},
		{"slug": "pow", "ratePerMinute": 60, "pow": map[string]any{"enabled": true, "bits": 8}},
		{"slug": "patched", "ratePerMinute": 60},
	} {
		cfg["name"], cfg["targetUrl"], cfg["domains"] = "Sale", "https://shop.example.com/tickets", []string{"shop.example.com"}
		b, _ := json.Marshal(cfg)
		req, _ := http.NewRequest("POST", srv.URL+"/api/admin/queue/sites", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+adminTok)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			f.Fatal(err)
		}
		var m struct{ Site struct{ ID string } }
		err = json.NewDecoder(res.Body).Decode(&m)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusCreated {
			f.Fatalf("create %v: %d %v", cfg["slug"], res.StatusCode, err)
		}
		ids[cfg["slug"].(string)] = m.Site.ID
	}
	return srv, ids
}

// adminAnswerOK reports whether status is a right answer of the admin API
// to the Authorization header auth: 200 for the admin token alone (HTTP
// drops the blanks around a header value), and never 200 for anything
// else. Every wrong guess counts against the fuzzer's one address, so once
// it is over its budget even the right token is answered 429: the address
// is limited, not the token.
func adminAnswerOK(auth string, status int) bool {
	if strings.Trim(auth, " \t") == "Bearer "+adminTok {
		return status == http.StatusOK || status == http.StatusTooManyRequests
	}
	return status != http.StatusOK
}

// FuzzRequestHeaders sends fuzzed Authorization, Accept-Language and Origin
// headers. Invariants: no 5xx; the admin API lets in the admin token only
// (no qak_ key exists here); CORS allows only the room's domain; the page
// speaks German or English.
func FuzzRequestHeaders(f *testing.F) {
	srv, _ := fuzzServer(f)
	for _, s := range [][3]string{
		{"Bearer " + adminTok, "de", "https://shop.example.com"},
		{"Bearer " + adminTok + " ", "de;q=nan,en", "https://shop.example.com.evil.example"},
		{"bearer " + adminTok, "", "null"},
		{"Bearer qak_x_y", "*", "https://evil.example"},
		{"Bearer qak__", "de-AT", "http://shop.example.com:8080"},
		{"Bearer ", "x;q=0", "https://SHOP.example.com"},
		{"Basic YTpi", "en", ""},
		{"", "fr-CH, ja;q=0.9, *;q=0.1", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, auth, lang, origin string) {
		for _, v := range []string{auth, lang, origin} {
			if strings.IndexFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
				return // not a header value: net/http refuses it before any handler
			}
		}
		for _, rt := range []struct{ method, path string }{{"GET", "/api/admin/queue/sites"}, {"GET", "/queue/open"},
			{"GET", "/queue/open/info"}, {"OPTIONS", "/queue/open/join"}} {
			req, _ := http.NewRequest(rt.method, srv.URL+rt.path, nil)
			req.Header.Set("Authorization", auth)
			req.Header.Set("Accept-Language", lang)
			req.Header.Set("Origin", origin)
			res, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s %s: %v", rt.method, rt.path, err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			switch {
			case res.StatusCode >= 500:
				t.Fatalf("%s %s (%q, %q, %q): %d %s", rt.method, rt.path, auth, lang, origin, res.StatusCode, b)
			case strings.HasPrefix(rt.path, "/api/") && !adminAnswerOK(auth, res.StatusCode):
				t.Fatalf("admin API with Authorization %q: %d", auth, res.StatusCode)
			case rt.path == "/queue/open" && res.Header.Get("Content-Language") != web.PageLang("", "", lang):
				t.Fatalf("page in %q for Accept-Language %q", res.Header.Get("Content-Language"), lang)
			}
			if a := res.Header.Get("Access-Control-Allow-Origin"); a != "" {
				u, err := url.Parse(a)
				// A host name with its root's trailing dot is the same host.
				if err != nil || a != strings.Trim(origin, " \t") || !strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), "shop.example.com") {
					t.Fatalf("CORS allows %q for Origin %q", a, origin)
				}
			}
		}
	})
}
