package returnurl

import (
	"net/url"
	"strings"
	"testing"
)

// testDomains is the configuration every case runs against.
var testDomains = []string{"shop.example.com", "127.0.0.1", "localhost", "*.tickets.example.org", "xn--mnchen-3ya.example"}

// checkCases is the corpus: tricks that must be refused and return URLs
// that must be accepted. It also seeds FuzzCheck.
var checkCases = []struct {
	name string
	raw  string
	want string // normalised String() when accepted; "" means refused
}{
	// Accepted.
	{"plain https", "https://shop.example.com/", "https://shop.example.com/"},
	{"no path", "https://shop.example.com", "https://shop.example.com"},
	{"event page with query and fragment", "https://shop.example.com/event/42?seat=A1#top", "https://shop.example.com/event/42?seat=A1#top"},
	{"host case folded", "https://SHOP.Example.COM/event/42", "https://shop.example.com/event/42"},
	{"scheme case folded", "HTTPS://shop.example.com/", "https://shop.example.com/"},
	{"trailing dot removed", "https://shop.example.com./event/42", "https://shop.example.com/event/42"},
	{"explicit port", "https://shop.example.com:8443/x", "https://shop.example.com:8443/x"},
	{"token left for StripToken", "https://shop.example.com/e?aditus_queue_token=abc&x=1", "https://shop.example.com/e?aditus_queue_token=abc&x=1"},
	{"http on 127.0.0.1", "http://127.0.0.1:3000/event/42", "http://127.0.0.1:3000/event/42"},
	{"http on localhost", "http://localhost:8080/", "http://localhost:8080/"},
	{"https on 127.0.0.1", "https://127.0.0.1/", "https://127.0.0.1/"},
	{"wildcard subdomain", "https://a.tickets.example.org/", "https://a.tickets.example.org/"},
	{"wildcard deeper subdomain", "https://a.b.tickets.example.org/x", "https://a.b.tickets.example.org/x"},
	{"listed punycode host", "https://xn--mnchen-3ya.example/", "https://xn--mnchen-3ya.example/"},
	{"encoded path and query", "https://shop.example.com/a%20b?q=%C3%BC", "https://shop.example.com/a%20b?q=%C3%BC"},
	{"URL inside the query", "https://shop.example.com/?next=https://evil.com", "https://shop.example.com/?next=https://evil.com"},
	{"encoded slashes in the path", "https://shop.example.com/%2F%2Fevil.com", "https://shop.example.com/%2F%2Fevil.com"},
	{"at sign after the path", "https://shop.example.com/x@evil.com", "https://shop.example.com/x@evil.com"},
	{"at sign in the fragment", "https://shop.example.com#@evil.com", "https://shop.example.com#@evil.com"},
	{"backslash in the query", `https://shop.example.com/?q=a\b`, `https://shop.example.com/?q=a\b`},
	{"underscore label", "https://my_shop.tickets.example.org/", "https://my_shop.tickets.example.org/"},

	// Refused: not an absolute http(s) URL.
	{"empty", "", ""},
	{"relative path", "/event/42", ""},
	{"protocol-relative", "//evil.com", ""},
	{"triple slash", "///evil.com", ""},
	{"slash backslash", `/\evil.com`, ""},
	{"double backslash", `\\evil.com`, ""},
	{"scheme without slashes", "https:evil.com", ""},
	{"scheme with one slash", "https:/evil.com", ""},
	{"scheme with backslashes", `https:\\evil.com`, ""},
	{"scheme with three slashes", "https:///evil.com", ""},
	{"backslash as authority start", `https://\evil.com`, ""},
	{"mixed slashes", `https:/\evil.com`, ""},

	// Refused: other schemes.
	{"javascript", "javascript:alert(1)", ""},
	{"javascript with fake authority", "javascript://shop.example.com/%0aalert(1)", ""},
	{"javascript mixed case", "JaVaScRiPt:alert(document.domain)", ""},
	{"data", "data:text/html,<script>alert(1)</script>", ""},
	{"vbscript", "vbscript:msgbox(1)", ""},
	{"ftp", "ftp://shop.example.com/", ""},
	{"websocket", "wss://shop.example.com/", ""},
	{"blob", "blob:https://shop.example.com/0f3c", ""},
	{"file", "file:///etc/passwd", ""},
	{"about", "about:blank", ""},
	{"plain http to a shop", "http://shop.example.com/", ""},

	// Refused: host not configured.
	{"foreign host", "https://evil.com/", ""},
	{"subdomain of an exact entry", "https://evil.shop.example.com/", ""},
	{"configured host as a prefix", "https://shop.example.com.evil.com/", ""},
	{"suffix without a dot", "https://evilshop.example.com/", ""},
	{"wildcard apex", "https://tickets.example.org/", ""},
	{"wildcard suffix without a dot", "https://eviltickets.example.org/", ""},
	{"literal star host", "https://*.tickets.example.org/", ""},
	{"localhost as a prefix", "http://localhost.evil.com/", ""},
	{"loopback as a prefix", "http://127.0.0.1.nip.io/", ""},
	{"IPv6 loopback not listed", "https://[::1]/", ""},
	{"IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]/", ""},
	{"short IPv4", "http://127.1/", ""},
	{"decimal IPv4", "http://2130706433/", ""},
	{"hex IPv4", "http://0x7f.0.0.1/", ""},
	{"octal IPv4", "http://0177.0.0.1/", ""},

	// Refused: userinfo.
	{"userinfo naming the shop", "https://shop.example.com@evil.com/", ""},
	{"backslash before at", `https://evil.com\@shop.example.com/`, ""},
	{"user and password", "https://user:pass@shop.example.com/", ""},
	{"empty password", "https://shop.example.com:@evil.com", ""},
	{"port-looking userinfo", "https://shop.example.com:443@evil.com/", ""},
	{"encoded backslash before at", "https://shop.example.com%5c@evil.com/", ""},
	{"encoded at", "https://evil.com%40shop.example.com/", ""},

	// Refused: encoded or odd host characters.
	{"encoded dot", "https://shop%2eexample.com/", ""},
	{"encoded slash", "https://evil.com%2fshop.example.com/", ""},
	{"encoded slash then dot", "https://evil.com%2f.shop.example.com/", ""},
	{"encoded NUL", "https://shop.example.com%00.evil.com/", ""},
	{"backslash in host", `https://shop.example.com\.evil.com/`, ""},
	{"backslash in path", `https://shop.example.com/\evil.com`, ""},
	{"query right after host with evil", "https://evil.com?.shop.example.com", ""},
	{"fragment right after host with evil", "https://evil.com#@shop.example.com", ""},
	{"empty label", "https://shop..example.com/", ""},
	{"leading dot", "https://.shop.example.com/", ""},
	{"two trailing dots", "https://shop.example.com../", ""},
	{"hyphen label edge", "https://-shop.tickets.example.org/", ""},
	{"port too large", "https://shop.example.com:99999/", ""},
	{"negative port", "https://shop.example.com:-1/", ""},
	{"letter in port", "https://shop.example.com:8o/", ""},
	{"port zero", "https://shop.example.com:0/", ""},
	{"two ports", "https://shop.example.com:80:80/", ""},

	// Refused: IDN look-alikes.
	{"cyrillic a", "https://shop.ex\u0430mple.com/", ""},
	{"fullwidth letters", "https://\uff53\uff48\uff4f\uff50.example.com/", ""},
	{"ideographic full stop", "https://shop.example.com\u3002evil.com/", ""},
	{"fullwidth solidus", "https://evil.com\uff0fshop.example.com/", ""},
	{"punycode under a wildcard", "https://xn--80ak6aa92e.tickets.example.org/", ""},
	{"unlisted punycode", "https://xn--shp-0ra.example.com/", ""},
	{"unicode in the path", "https://shop.example.com/\u00e9v\u00e9nement", ""},

	// Refused: whitespace and control characters.
	{"leading space", " https://shop.example.com/", ""},
	{"trailing newline", "https://shop.example.com/\n", ""},
	{"newline in path", "https://shop.example.com/a\nb", ""},
	{"tab in host", "https://shop.example.com\t.evil.com/", ""},
	{"space in path", "https://shop.example.com/ path", ""},
	{"space after scheme", "https:// shop.example.com", ""},
	{"NUL in host", "https://sho\x00p.example.com/", ""},
	{"DEL", "https://shop.example.com/\x7f", ""},
	{"line separator", "https://shop.example.com\u2028/", ""},
	{"no-break space", "https://shop.example.com/\u00a0", ""},
	{"bidi override", "\u202ehttps://shop.example.com/", ""},

	// Refused: too long.
	{"over-long", "https://shop.example.com/" + strings.Repeat("a", MaxLength), ""},
}

func TestCheck(t *testing.T) {
	refused := 0
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			u, ok := Check(tc.raw, testDomains)
			if tc.want == "" {
				if ok || u != nil {
					t.Fatalf("Check(%q) = %v, true; want refused", tc.raw, u)
				}
				return
			}
			if !ok {
				t.Fatalf("Check(%q) refused; want %q", tc.raw, tc.want)
			}
			if got := u.String(); got != tc.want {
				t.Errorf("Check(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
		if tc.want == "" {
			refused++
		}
	}
	if refused < 40 {
		t.Errorf("corpus has %d refused cases, want at least 40", refused)
	}
}

func TestCheckMaxLength(t *testing.T) {
	prefix := "https://shop.example.com/"
	exact := prefix + strings.Repeat("a", MaxLength-len(prefix))
	if _, ok := Check(exact, testDomains); !ok {
		t.Errorf("a URL of exactly %d bytes was refused", MaxLength)
	}
	if _, ok := Check(exact+"a", testDomains); ok {
		t.Errorf("a URL of %d bytes was accepted", MaxLength+1)
	}
}

func TestCheckDomainEntries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		domains []string
		raw     string
		want    bool
	}{
		{"entry case and dot folded", []string{" Shop.Example.COM. "}, "https://shop.example.com/", true},
		{"no domains", nil, "https://shop.example.com/", false},
		{"empty entry", []string{""}, "https://shop.example.com/", false},
		{"wildcard on a single label is ignored", []string{"*.com"}, "https://shop.com/", false},
		{"bare star is ignored", []string{"*"}, "https://shop.example.com/", false},
		{"wildcard on an IP is ignored", []string{"*.0.0.1"}, "https://127.0.0.0.1/", false},
		{"entry with a port never matches", []string{"shop.example.com:443"}, "https://shop.example.com:443/", false},
		{"http needs a loopback host even when listed", []string{"shop.example.com"}, "http://shop.example.com/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := Check(tc.raw, tc.domains); got != tc.want {
				t.Errorf("Check(%q, %q) ok = %v, want %v", tc.raw, tc.domains, got, tc.want)
			}
		})
	}
}

func TestStripToken(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"only the token", "https://shop.example.com/e?aditus_queue_token=abc", "https://shop.example.com/e"},
		{"token in the middle", "https://shop.example.com/e?a=1&aditus_queue_token=abc&b=2", "https://shop.example.com/e?a=1&b=2"},
		{"token first", "https://shop.example.com/e?aditus_queue_token=abc&b=2", "https://shop.example.com/e?b=2"},
		{"encoded name", "https://shop.example.com/e?aditus%5Fqueue%5Ftoken=abc&b=2", "https://shop.example.com/e?b=2"},
		{"repeated", "https://shop.example.com/e?a=1&aditus_queue_token=x&aditus_queue_token=y", "https://shop.example.com/e?a=1"},
		{"without a value", "https://shop.example.com/e?aditus_queue_token", "https://shop.example.com/e"},
		{"other encoding kept", "https://shop.example.com/e?b=%20x+y&a=1&aditus_queue_token=t", "https://shop.example.com/e?b=%20x+y&a=1"},
		{"fragment kept", "https://shop.example.com/e?aditus_queue_token=t#seats", "https://shop.example.com/e#seats"},
		{"similar name kept", "https://shop.example.com/e?aditus_queue_tokenx=1", "https://shop.example.com/e?aditus_queue_tokenx=1"},
		{"no query", "https://shop.example.com/e", "https://shop.example.com/e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			StripToken(u)
			if got := u.String(); got != tc.want {
				t.Errorf("StripToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	StripToken(nil) // must not panic
}

func TestWithToken(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"no query", "https://shop.example.com/e", "https://shop.example.com/e?aditus_queue_token=a.b-c_d"},
		{"order and encoding kept", "https://shop.example.com/e?z=1&b=%20x+y&a=%41", "https://shop.example.com/e?z=1&b=%20x+y&a=%41&aditus_queue_token=a.b-c_d"},
		{"stale token replaced", "https://shop.example.com/e?aditus_queue_token=old&z=1", "https://shop.example.com/e?z=1&aditus_queue_token=a.b-c_d"},
		{"empty query", "https://shop.example.com/e?", "https://shop.example.com/e?aditus_queue_token=a.b-c_d"},
		{"fragment kept", "https://shop.example.com/e?z=1#seats", "https://shop.example.com/e?z=1&aditus_queue_token=a.b-c_d#seats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WithToken(tc.in, "a.b-c_d"); got != tc.want {
				t.Errorf("WithToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := WithToken("https://shop.example.com/e", "a+b/c="); got != "https://shop.example.com/e?aditus_queue_token=a%2Bb%2Fc%3D" {
		t.Errorf("token escaped: got %q", got)
	}
}

// FuzzCheck asserts that whatever Check accepts leads a browser to an
// allowed host: the raw input and the String() of the result are both
// re-parsed with the WHATWG host rules (browserParse) and with net/url.
func FuzzCheck(f *testing.F) {
	for _, tc := range checkCases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, ok := Check(raw, testDomains)
		if !ok {
			if u != nil {
				t.Fatalf("Check(%q) refused but returned %v", raw, u)
			}
			return
		}
		s := u.String()
		for _, in := range []string{raw, s} {
			scheme, host, err := browserParse(in)
			if err != nil {
				t.Fatalf("Check(%q) accepted, but a browser reads %q as broken: %v", raw, in, err)
			}
			if scheme != "https" && scheme != "http" {
				t.Fatalf("Check(%q) accepted, but a browser reads %q with scheme %q", raw, in, scheme)
			}
			if !allowedForTest(strings.TrimSuffix(host, ".")) {
				t.Fatalf("Check(%q) accepted, but a browser reads %q with host %q", raw, in, host)
			}
		}
		v, err := url.Parse(s)
		if err != nil {
			t.Fatalf("String() of accepted %q does not re-parse: %v", raw, err)
		}
		if _, host, _ := browserParse(s); v.Hostname() != host {
			t.Fatalf("net/url reads host %q from %q, a browser %q", v.Hostname(), s, host)
		}
		again, ok := Check(s, testDomains)
		if !ok || again.String() != s {
			t.Fatalf("Check is not stable: %q -> %q -> %v, %v", raw, s, again, ok)
		}
	})
}

// allowedForTest restates testDomains without sharing code with Check.
func allowedForTest(host string) bool {
	switch host {
	case "shop.example.com", "127.0.0.1", "localhost", "xn--mnchen-3ya.example":
		return true
	}
	sub, ok := strings.CutSuffix(host, ".tickets.example.org")
	return ok && sub != "" && !strings.Contains("."+sub, ".xn--")
}
