package edge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/transport/returnurl"
)

// flavor is how a gate answers: ours, or one of the seed's sketches, which
// send visitors to the bare room URL and differ in how they take a token
// from the URL.
type flavor int

const (
	ours       flavor = iota
	seedNginx         // passes the request with the token on, setting the cookie
	seedWorker        // cookie and 302 to the clean URL, like ours
)

// room is one waiting room's parameters as a gate is configured with them.
type room struct {
	slug, secret string
	url          string // the waiting room, https://queue.example.com/queue/<slug>
}

func newRoom(slug string) room {
	b := make([]byte, 32)
	rand.Read(b)
	return room{
		slug:   slug,
		secret: base64.RawURLEncoding.EncodeToString(b),
		url:    "https://queue.example.com/queue/" + slug,
	}
}

// tokens are the admission tokens of the table, all minted at now.
type tokens struct {
	valid string
	exp   time.Time
	bad   []badToken
}

type badToken struct {
	name, raw string
	ours      bool // only our gates pin the algorithm in the header
	// seedErrs: the seed's Worker throws on a token that is not base64url
	// and answers 500 — closed, but not the room.
	seedErrs bool
}

func mintTokens(t *testing.T, r room, now time.Time) tokens {
	t.Helper()
	secret := []byte(r.secret)
	mint := func(secret []byte, slug string, at time.Time) string {
		s, _, err := token.Mint(secret, slug, 42, false, at, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid, exp, err := token.Mint(secret, r.slug, 42, false, now, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other := newRoom("other-room")
	claims := map[string]any{"iss": token.Issuer, "aud": r.slug, "qnr": 42, "iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs256, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(claims)).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tokens{valid: valid, exp: exp, bad: []badToken{
		{name: "expired", raw: mint(secret, r.slug, now.Add(-11*time.Minute))},
		{name: "wrong audience", raw: mint(secret, "another-slug", now)},
		{name: "other room", raw: mint([]byte(other.secret), other.slug, now)},
		{name: "forged signature", raw: mint([]byte("not the secret of this room"), r.slug, now)},
		{name: "tampered claims", raw: tamper(valid)},
		{name: "alg none", raw: handmade(map[string]any{"alg": "none", "typ": "JWT"}, claims, nil)},
		{name: "alg none with HS256 signature", raw: handmade(map[string]any{"alg": "none", "typ": "JWT"}, claims, secret), ours: true},
		{name: "RS256 signed", raw: rs256},
		{name: "RS256 header, HS256 signature", raw: handmade(map[string]any{"alg": "RS256", "typ": "JWT"}, claims, secret), ours: true},
		{name: "garbage", raw: "not.a.token", seedErrs: true},
	}}
}

// handmade builds a JWT with any header; signed with HMAC-SHA256 under
// secret, or with an empty signature when secret is nil.
func handmade(header, claims map[string]any, secret []byte) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	s := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sig := ""
	if secret != nil {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(s))
		sig = base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	return s + "." + sig
}

// tamper raises the number in a valid token's claims and keeps its
// signature.
func tamper(valid string) string {
	p := strings.Split(valid, ".")
	c, _ := base64.RawURLEncoding.DecodeString(p[1])
	var m map[string]any
	json.Unmarshal(c, &m)
	m["qnr"] = 1
	b, _ := json.Marshal(m)
	return p[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + p[2]
}

// upstream is the shop behind a gate: it answers every request with what
// it saw and records whether the request carried a valid token.
type upstream struct {
	room room
	mu   sync.Mutex // guards seen
	seen []seenRequest
}

type seenRequest struct {
	uri   string
	valid bool
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("aditus_queue_token")
	if ck, err := r.Cookie("aditus_queue"); err == nil {
		raw = ck.Value
	}
	_, err := token.Verify([]byte(u.room.secret), u.room.slug, raw, time.Now())
	u.mu.Lock()
	u.seen = append(u.seen, seenRequest{uri: r.URL.RequestURI(), valid: err == nil})
	u.mu.Unlock()
	fmt.Fprintf(w, "upstream %s", r.URL.RequestURI())
}

func (u *upstream) requests() []seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seenRequest(nil), u.seen...)
}

// client never follows redirects: every hop is checked.
var client = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type answer struct {
	status   int
	location string
	cookie   string // the Set-Cookie header
	body     string
}

func get(t *testing.T, base, uri, cookie string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", base+uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", uri, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, location: res.Header.Get("Location"), cookie: res.Header.Get("Set-Cookie"), body: string(b)}
}

// runTable runs the table every gate passes against the gate at base,
// configured with r, in front of up.
func runTable(t *testing.T, base string, r room, up *upstream, fl flavor) {
	now := time.Now()
	toks := mintTokens(t, r, now)
	const page = "/event/42?seat=7&x=a%20b"
	var wantRoom func(t *testing.T, a answer)
	wantClosed := func(bad badToken) func(t *testing.T, a answer) {
		return func(t *testing.T, a answer) {
			t.Helper()
			if bad.seedErrs && fl == seedWorker && a.status == http.StatusInternalServerError {
				return
			}
			wantRoom(t, a)
		}
	}
	wantRoom = func(t *testing.T, a answer) {
		t.Helper()
		want := r.url + "/enter?return=" + url.QueryEscape(base+page)
		if fl != ours {
			want = r.url
		}
		if a.status != http.StatusFound || a.location != want {
			t.Fatalf("got %d %q, want 302 %q", a.status, a.location, want)
		}
		if fl == ours {
			// The room follows the return URL only if it passes its check
			// against the room's domains.
			loc, _ := url.Parse(a.location)
			if _, ok := returnurl.Check(loc.Query().Get("return"), []string{"127.0.0.1"}); !ok {
				t.Fatalf("the room would refuse the return URL of %q", a.location)
			}
		}
	}
	passed := 0

	t.Run("no token goes to the room with the page as return URL", func(t *testing.T) {
		wantRoom(t, get(t, base, page, ""))
	})
	t.Run("a cookie of another name goes to the room", func(t *testing.T) {
		wantRoom(t, get(t, base, page, "other="+toks.valid))
	})
	t.Run("valid token in the URL sets the cookie, cleans the URL and reaches the upstream", func(t *testing.T) {
		a := get(t, base, page+"&aditus_queue_token="+toks.valid, "")
		checkCookie(t, a.cookie, toks, fl)
		if fl == seedNginx {
			// The seed's nginx sketch passes the request on as it came.
			if a.status != http.StatusOK || a.body != "upstream "+page+"&aditus_queue_token="+toks.valid {
				t.Fatalf("got %d %q, want the upstream's page", a.status, a.body)
			}
			passed++
			return
		}
		if a.status != http.StatusFound {
			t.Fatalf("got %d, want 302 to the clean URL", a.status)
		}
		loc, err := url.Parse(a.location)
		want, _ := url.Parse(page)
		if err != nil || loc.Path != want.Path || (fl == ours && loc.RawQuery != want.RawQuery) ||
			loc.Query().Encode() != want.Query().Encode() {
			t.Fatalf("got Location %q, want %q", a.location, page)
		}
		if loc.IsAbs() && fl == ours && loc.Scheme+"://"+loc.Host != base {
			t.Fatalf("got Location %q, want one on %s", a.location, base)
		}
		b := get(t, base, page, "aditus_queue="+toks.valid)
		if b.status != http.StatusOK || b.body != "upstream "+page {
			t.Fatalf("following the clean URL: got %d %q, want the upstream's page", b.status, b.body)
		}
		passed++
	})
	t.Run("valid cookie reaches the upstream", func(t *testing.T) {
		a := get(t, base, "/", "a=1; aditus_queue="+toks.valid+"; b=2")
		if a.status != http.StatusOK || a.body != "upstream /" {
			t.Fatalf("got %d %q, want the upstream's page", a.status, a.body)
		}
		passed++
	})
	for _, bad := range toks.bad {
		if bad.ours && fl != ours {
			continue
		}
		t.Run(bad.name+" in the URL goes to the room", func(t *testing.T) {
			a := get(t, base, page+"&aditus_queue_token="+url.QueryEscape(bad.raw), "")
			if a.cookie != "" {
				t.Errorf("got Set-Cookie %q, want none", a.cookie)
			}
			if fl == ours {
				// The return URL never carries the refused token.
				wantRoom(t, a)
				return
			}
			wantClosed(bad)(t, a)
		})
		t.Run(bad.name+" in the cookie goes to the room", func(t *testing.T) {
			wantClosed(bad)(t, get(t, base, page, "aditus_queue="+bad.raw))
		})
	}

	t.Run("the upstream never saw a request without a valid token", func(t *testing.T) {
		seen := up.requests()
		for _, s := range seen {
			if !s.valid {
				t.Errorf("upstream saw %s without a valid token", s.uri)
			}
		}
		if len(seen) != passed {
			t.Errorf("upstream saw %d requests, want %d: %v", len(seen), passed, seen)
		}
	})
}

var maxAge = regexp.MustCompile(`(?i);\s*Max-Age=(\d+)`)

// checkCookie checks the Set-Cookie header given for a valid token: ours
// is Secure, HttpOnly, SameSite=Lax and lives as long as the token.
func checkCookie(t *testing.T, h string, toks tokens, fl flavor) {
	t.Helper()
	if !strings.HasPrefix(h, "aditus_queue="+toks.valid+";") {
		t.Fatalf("got Set-Cookie %q, want the token in aditus_queue", h)
	}
	attrs := strings.ToLower(h)
	for _, a := range []string{"; path=/", "; secure", "; httponly"} {
		if !strings.Contains(attrs, a) {
			t.Errorf("got Set-Cookie %q, want %s", h, a[2:])
		}
	}
	m := maxAge.FindStringSubmatch(h)
	if m == nil {
		t.Fatalf("got Set-Cookie %q, want Max-Age", h)
	}
	if fl != ours {
		return // the sketches keep the cookie 600 s
	}
	if !strings.Contains(attrs, "; samesite=lax") {
		t.Errorf("got Set-Cookie %q, want SameSite=Lax", h)
	}
	age, _ := strconv.Atoi(m[1])
	left := time.Until(toks.exp).Seconds()
	if float64(age) > left+1 || float64(age) < left-5 {
		t.Errorf("got Max-Age %d, want the token's remaining %.0f s", age, left)
	}
}
