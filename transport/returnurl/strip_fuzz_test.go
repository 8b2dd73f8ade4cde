package returnurl

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzStripToken completes FuzzCheck for the second step every accepted
// return URL takes: StripToken. Invariants: the stripped URL names no token
// however the parameter is spelled (as url.ParseQuery, and so a shop,
// reads it), keeps every other parameter as it was written, and is still a
// return URL Check accepts for the same host.
func FuzzStripToken(f *testing.F) {
	for _, s := range []string{
		"https://shop.example.com/e?aditus_queue_token=abc&x=1",
		"https://shop.example.com/e?x=1&aditus_queue_token=abc&aditus_queue_token=def#f",
		"https://shop.example.com/e?aditus%5Fqueue%5Ftoken=abc",
		"https://shop.example.com/e?aditus_queue_token",
		"https://shop.example.com/e?aditus_queue_token=a;b&y=%zz",
		"https://shop.example.com/e?%zz&aditus_queue_token=1",
		"https://shop.example.com/e?",
		"https://shop.example.com/e?&&",
		"https://shop.example.com/e?aditus+queue+token=1&aditus_queue_token+=2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, ok := Check(raw, testDomains)
		if !ok {
			return
		}
		host := u.Host
		var others []string
		for _, p := range strings.Split(u.RawQuery, "&") {
			k, _, _ := strings.Cut(p, "=")
			if uk, err := url.QueryUnescape(k); err != nil || uk != TokenParam {
				others = append(others, p)
			}
		}
		StripToken(u)
		if q, _ := url.ParseQuery(u.RawQuery); len(q[TokenParam]) > 0 {
			t.Fatalf("StripToken(%q) leaves a token: %q", raw, u.RawQuery)
		}
		if u.RawQuery != strings.Join(others, "&") && u.RawQuery != "" {
			t.Fatalf("StripToken(%q) = %q, want the other parameters %q", raw, u.RawQuery, others)
		}
		again, ok := Check(u.String(), testDomains)
		if !ok || again.Host != host {
			t.Fatalf("StripToken(%q) = %q, which Check reads as %v, %v", raw, u, again, ok)
		}
	})
}
