package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// validHeader reports whether net/http would carry s as a header value.
func validHeader(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) < 0
}

// FuzzTrustedProxyHeaders sends fuzzed X-Forwarded-For, X-Forwarded-Proto
// and User-Agent values from a trusted balancer or from a client.
// Invariants: a client's headers never change anything (the cookie is
// Secure only over TLS, the upstream hears the peer alone, no crawler
// bypass); from a trusted balancer the cookie is Secure exactly when the
// last X-Forwarded-Proto value says https, and the upstream hears the
// balancer's chain with the balancer appended.
func FuzzTrustedProxyHeaders(f *testing.F) {
	h := frontHandler(f, fmt.Sprintf(trustLB, `"auto"`), `rule "robots" {
      bypass { user_agents = ["Googlebot"] }
    }`, 1<<20, Options{DNS: frontDNS{}})
	for _, s := range [][3]string{
		{"198.51.100.7", "https", googlebotUA},
		{"66.249.66.1", "http", googlebotUA},
		{"66.249.66.1, 10.0.0.9", "https, http", ""},
		{"[2001:db8::1]:443, junk, 10.1.1.1", "HTTPS", "x"},
		{strings.Repeat("1.2.3.4,", 40), "https,", googlebotUA},
		{",,,", " https ", ""},
		{"66.249.66.1:80", "", googlebotUA},
	} {
		f.Add(true, false, s[0], s[1], s[2])
		f.Add(false, false, s[0], s[1], s[2])
		f.Add(false, true, s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, trusted, tls bool, xff, xfp, ua string) {
		if !validHeader(xff) || !validHeader(xfp) || !validHeader(ua) {
			return
		}
		peer, peerIP := "203.0.113.9:5000", "203.0.113.9"
		if trusted {
			peer, peerIP = "10.1.2.3:5000", "10.1.2.3"
		}
		var hdr []string
		for _, kv := range [][2]string{{"X-Forwarded-For", xff}, {"X-Forwarded-Proto", xfp}, {"User-Agent", ua}} {
			if kv[1] != "" {
				hdr = append(hdr, kv[0], kv[1])
			}
		}
		res := visit(h, peer, tls, hdr...)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		cs := res.Cookies()
		seenXFF, seenXFP := res.Header.Get("Seen-XFF"), res.Header.Get("Seen-XFP")
		lastProto := strings.TrimSpace(xfp[strings.LastIndexByte(xfp, ',')+1:])
		wantSecure := tls || trusted && strings.EqualFold(lastProto, "https")
		if !trusted && len(cs) == 0 {
			t.Fatal("a client's headers made it a crawler")
		}
		if len(cs) == 1 && cs[0].Secure != wantSecure {
			t.Fatalf("cookie Secure %v, want %v", cs[0].Secure, wantSecure)
		}
		wantXFF := peerIP
		if trusted && xff != "" {
			// The balancer's chain as written (the wire trims its ends).
			wantXFF = strings.Trim(xff+", "+peerIP, " \t")
		}
		if seenXFF != wantXFF {
			t.Fatalf("upstream heard X-Forwarded-For %q, want %q", seenXFF, wantXFF)
		}
		if want := map[bool]string{true: "https", false: "http"}[wantSecure]; seenXFP != want {
			t.Fatalf("upstream heard X-Forwarded-Proto %q, want %q", seenXFP, want)
		}
	})
}
