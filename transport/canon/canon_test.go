package canon

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		in, escaped, match string
	}{
		{"/", "/", "/"},
		{"/checkout", "/checkout", "/checkout"},
		{"//checkout", "/checkout", "/checkout"},
		{"/static/../checkout", "/checkout", "/checkout"},
		{"/static/%2e%2e/checkout", "/checkout", "/checkout"},
		{"/static/%2E%2E/checkout", "/checkout", "/checkout"},
		{"/static/.%2e/checkout", "/checkout", "/checkout"},
		{"/./checkout", "/checkout", "/checkout"},
		{"/%63heckout", "/checkout", "/checkout"},
		{"/check%6Fut", "/checkout", "/checkout"},
		{"/a//b///c", "/a/b/c", "/a/b/c"},
		{"/a/b/..", "/a/", "/a/"},
		{"/a/b/.", "/a/b/", "/a/b/"},
		{"/a/", "/a/", "/a/"},
		{"/a/..", "/", "/"},
		{"/a//../b", "/b", "/b"},
		{"/checkout;jsessionid=ABC", "/checkout;jsessionid=ABC", "/checkout"},
		{"/;x/checkout", "/;x/checkout", "/checkout"},
		{"/shop;a=1/checkout;b=2", "/shop;a=1/checkout;b=2", "/shop/checkout"},
		{"/a%3bb", "/a%3Bb", "/a;b"},
		{"/caf%c3%a9", "/caf%C3%A9", "/café"},
		{"/café", "/caf%C3%A9", "/café"},
		{"/a b", "/a%20b", "/a b"},
		{"/100%25", "/100%25", "/100%"},
		{"/a%25zz", "/a%25zz", "/a%zz"},
		{"/x?y", "/x%3Fy", "/x?y"},
		{"/CHECKOUT", "/CHECKOUT", "/CHECKOUT"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Path(tc.in)
			if err != nil {
				t.Fatalf("Path(%q): %v", tc.in, err)
			}
			if got.Escaped != tc.escaped || got.Match != tc.match {
				t.Errorf("Path(%q) = %q matching %q, want %q matching %q", tc.in, got.Escaped, got.Match, tc.escaped, tc.match)
			}
		})
	}
}

func TestPathRefuses(t *testing.T) {
	for _, in := range []string{
		"", "checkout", "*",
		"/a%2fb", "/a%2Fb", "/static/..%2fcheckout",
		`/a\b`, "/a%5cb", "/static/..%5Ccheckout",
		"/a%00b", "/a\x00b", "/a%0d%0aX:y", "/a\tb", "/a%7f",
		"/..", "/../checkout", "/a/../../checkout", "/%2e%2e/checkout", "/./../x",
		"/%252e%252e/checkout", "/a%252fb", "/%25%32%65",
		"/a%zz", "/a%", "/a%2", "/a%g0",
		"/a%ff", "/a%c3", "/\xff",
		"/static/..;/checkout", "/static/.;x/checkout", "/%2e%2e;x/a",
		"/" + strings.Repeat("a", MaxPath),
	} {
		t.Run(in, func(t *testing.T) {
			got, err := Path(in)
			if !errors.Is(err, ErrRefused) {
				t.Errorf("Path(%q) = %q, %v; want ErrRefused", in, got.Escaped, err)
			}
		})
	}
}

func TestHasPrefix(t *testing.T) {
	for _, tc := range []struct {
		p, prefix  string
		fold, want bool
	}{
		{"/checkout/x", "/checkout", false, true},
		{"/CHECKOUT/x", "/checkout", false, false},
		{"/CHECKOUT/x", "/checkout", true, true},
		{"/chec\u212aout", "/checkout", true, true},
		{"/cart", "/checkout", true, false},
	} {
		if got := HasPrefix(tc.p, tc.prefix, tc.fold); got != tc.want {
			t.Errorf("HasPrefix(%q, %q, %v) = %v, want %v", tc.p, tc.prefix, tc.fold, got, tc.want)
		}
	}
}

// FuzzPath checks the promises of the canonical form on any input: it is
// a fixed point (the upstream given Escaped finds the same path), it holds
// no dot segment, no empty segment but a trailing one, no encoded
// unreserved character, and Match is Decoded without parameters.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"/", "/static/../checkout", "//a/./b/", "/%2e%2E/x", "/a;b=c/d", "/caf%c3%a9", "/a%3Bb;c%3Bd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Path(in)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Path(%q): %v does not wrap ErrRefused", in, err)
			}
			return
		}
		again, err := Path(c.Escaped)
		if err != nil || again != c {
			t.Fatalf("Path(%q) = %+v, but Path(%q) = %+v, %v", in, c, c.Escaped, again, err)
		}
		body := strings.TrimSuffix(c.Escaped[1:], "/")
		for _, seg := range strings.Split(body, "/") {
			name, _, _ := strings.Cut(seg, ";")
			if (seg == "" && body != "") || name == "." || name == ".." {
				t.Fatalf("Path(%q) = %q: segment %q", in, c.Escaped, seg)
			}
		}
		if strings.Contains(c.Match, "//") && c.Match != "/" {
			t.Fatalf("Path(%q): match %q has an empty segment", in, c.Match)
		}
	})
}

func TestOf(t *testing.T) {
	for _, tc := range []struct{ target, want string }{
		{"/a/../b?x=/../y", "/b"},
		{"http://shop.test/static/../checkout?q", "/checkout"},
		{"https://shop.test", "/"},
		{"http://shop.test?q=1", "/"},
		{"/static/..%2Fcheckout", ""},
		{"*", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RequestURI = tc.target
		got, err := Of(r)
		if got.Escaped != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("Of(%q) = %q, %v; want %q", tc.target, got.Escaped, err, tc.want)
		}
	}
}

// TestPlainIsCanonical: the path taken without allocation is exactly what
// the full computation gives.
func TestPlainIsCanonical(t *testing.T) {
	for _, p := range []string{"/", "/a/b.c/", "/a/.b/..c/", "/a/b..", "/x/.../y", "/a:b@c/!$&'()*+,=", "/a/./b", "/a/..", "/a//b", "/a;b", "/a%41"} {
		if !plain(p) {
			continue
		}
		segs, err := segments(p)
		if err == nil {
			segs, err = removeDots(segs)
		}
		if err != nil || build(segs) != (Request{p, p, p}) {
			t.Errorf("plain(%q), but its canonical form is %+v, %v", p, build(segs), err)
		}
	}
	for _, p := range []string{"/a/./b", "/a/..", "/a//b", "/a;b", "/a%41", "/.", "/a/."} {
		if plain(p) {
			t.Errorf("plain(%q), want false", p)
		}
	}
}

func BenchmarkPath(b *testing.B) {
	for _, p := range []string{"/shop/products/1234-blue-shirt", "/static/%2e%2e/check%6Fut;jsessionid=ABC"} {
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Path(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOn: the request handed on carries the canonical path, with RawPath
// set only where the default encoding would differ (as url.Parse does, so
// that http.StripPrefix and the file server work on it).
func TestOn(t *testing.T) {
	for _, tc := range []struct{ target, path, raw, uri string }{
		{"/static/../caf%c3%a9?q=%2F", "/café", "", "/caf%C3%A9?q=%2F"},
		{"/a%3bb/./c", "/a;b/c", "/a%3Bb/c", "/a%3Bb/c"},
		{"//x;j=1", "/x;j=1", "", "/x;j=1"},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		c, err := Of(r)
		if err != nil {
			t.Fatal(err)
		}
		r2 := c.On(r)
		if r2.URL.Path != tc.path || r2.URL.RawPath != tc.raw || r2.RequestURI != tc.uri || r.RequestURI != tc.target {
			t.Errorf("%s: Path %q RawPath %q RequestURI %q (the original now %q), want %q %q %q", tc.target,
				r2.URL.Path, r2.URL.RawPath, r2.RequestURI, r.RequestURI, tc.path, tc.raw, tc.uri)
		}
	}
}
