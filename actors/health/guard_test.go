package health

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// fakeResolver answers from a table; unknown names do not resolve.
type fakeResolver map[string][]string

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range r[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

var names = fakeResolver{
	"shop.example":       {"93.184.216.34"},
	"dual.example":       {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"sneaky.example":     {"93.184.216.34", "10.0.0.7"},
	"localhost":          {"127.0.0.1", "::1"},
	"loop.example":       {"127.0.0.1"},
	"metadata.example":   {"169.254.169.254"},
	"mapped.example":     {"::ffff:10.1.2.3"},
	"cgnat.example":      {"100.64.0.1"},
	"sixtofour.example":  {"2002:7f00:1::1"},
	"nat64.example":      {"64:ff9b::a9fe:a9fe"},
	"ula.example":        {"fd12:3456::1"},
	"multicast.example":  {"224.0.0.1"},
	"broadcast.example":  {"255.255.255.255"},
	"thisnet.example":    {"0.1.2.3"},
	"linklocal6.example": {"fe80::1"},
}

// The corpus of tricks: every way we know to write an address that is not
// public, and a few that are.
func TestCheckURLCorpus(t *testing.T) {
	g := &Guard{Resolver: names}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://shop.example/health", true},
		{"http://shop.example:8080/health?x=1", true},
		{"https://dual.example/health", true},
		{"https://93.184.216.34/health", true},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/health", true},

		{"http://localhost/health", false},
		{"http://LOCALHOST./health", false},
		{"http://loop.example/health", false},
		{"http://127.0.0.1/health", false},
		{"http://127.0.0.1./health", false},
		{"http://[::ffff:a9fe:a9fe]/", false},
		{"http://127.1/health", false},
		{"http://2130706433/health", false},
		{"http://0x7f000001/health", false},
		{"http://0x7f.0.0.1/health", false},
		{"http://0177.0.0.1/health", false},
		{"http://017700000001/health", false},
		{"http://0/health", false},
		{"http://0.0.0.0/health", false},
		{"http://[::]/health", false},
		{"http://[::1]/health", false},
		{"http://[0:0:0:0:0:0:0:1]/health", false},
		{"http://[::ffff:127.0.0.1]/health", false},
		{"http://[::ffff:7f00:1]/health", false},
		{"http://[::127.0.0.1]/health", false},
		{"http://[fe80::1%25eth0]/health", false},
		{"http://169.254.169.254/latest/meta-data/", false},
		{"http://metadata.example/", false},
		{"http://10.0.0.1/", false},
		{"http://172.16.5.4/", false},
		{"http://192.168.1.1/", false},
		{"http://100.64.0.1/", false},
		{"http://cgnat.example/", false},
		{"http://mapped.example/", false},
		{"http://sneaky.example/", false},
		{"http://sixtofour.example/", false},
		{"http://nat64.example/", false},
		{"http://ula.example/", false},
		{"http://multicast.example/", false},
		{"http://broadcast.example/", false},
		{"http://thisnet.example/", false},
		{"http://linklocal6.example/", false},
		{"http://[fd00::1]/", false},
		{"http://[ff02::1]/", false},
		{"http://198.18.0.1/", false},
		{"http://unknown.example/", false},
		{"http://user:pw@shop.example/", false},
		{"ftp://shop.example/", false},
		{"file:///etc/passwd", false},
		{"gopher://shop.example/", false},
		{"//shop.example/health", false},
		{"http:///health", false},
		{"http://shop.example:0/", false},
		{"http://shop.example:99999/", false},
		{"http://93.184.216.34.xip.io.invalid/", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			err := g.CheckURL(context.Background(), tc.url)
			if (err == nil) != tc.ok {
				t.Fatalf("got %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrRefused) {
				t.Fatalf("got %v, want it to wrap ErrRefused", err)
			}
		})
	}
}

// With private addresses allowed, the shape is still checked.
func TestCheckURLAllowPrivate(t *testing.T) {
	g := &Guard{AllowPrivate: true, Resolver: names}
	for _, u := range []string{"http://127.0.0.1:8080/health", "http://localhost/health", "http://10.0.0.1/"} {
		if err := g.CheckURL(context.Background(), u); err != nil {
			t.Fatalf("%s: got %v, want allowed", u, err)
		}
	}
	for _, u := range []string{"http://2130706433/", "ftp://10.0.0.1/", "http://u@10.0.0.1/"} {
		if err := g.CheckURL(context.Background(), u); err == nil {
			t.Fatalf("%s: got nil, want refused", u)
		}
	}
}

func TestControlRefusesNonPublicAddresses(t *testing.T) {
	g := &Guard{}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:2800:220:1:248:1893:25c8:1946]:443", true},
		{"127.0.0.1:80", false},
		{"[::1]:80", false},
		{"[::ffff:169.254.169.254]:80", false},
		{"10.1.1.1:80", false},
		{"0.0.0.0:80", false},
		{"not an address", false},
	} {
		if err := g.Control("tcp", tc.addr, nil); (err == nil) != tc.ok {
			t.Fatalf("%s: got %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
	if err := (&Guard{AllowPrivate: true}).Control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("allowed: got %v", err)
	}
}

func TestLegacyIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "127.1": "127.0.0.1",
		"10.0x10.1": "10.16.0.1", "1.2.3.4": "1.2.3.4", "0": "0.0.0.0",
	} {
		got, ok := legacyIPv4(in)
		if !ok || got.String() != want {
			t.Fatalf("%s: got %v %v, want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"shop.example", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "4294967296", "0x", "08"} {
		if a, ok := legacyIPv4(in); ok {
			t.Fatalf("%s: got %v, want no address", in, a)
		}
	}
}

// FuzzCheckURL: whatever the URL, an accepted one names a host that is a
// public address or a name (resolved here to a public one), never a
// numeric form of another address.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1/", "http://2130706433/", "http://[::ffff:127.0.0.1]/",
		"https://shop.example/h", "http://0x7f.1/", "http://[fe80::1%25en0]/", "http://93.184.216.34/"} {
		f.Add(s)
	}
	g := &Guard{Resolver: fakeResolver{"shop.example": {"93.184.216.34"}}}
	f.Fuzz(func(t *testing.T, raw string) {
		if g.CheckURL(context.Background(), raw) != nil {
			return
		}
		host := hostOf(raw)
		if a, err := netip.ParseAddr(host); err == nil && !Public(a) {
			t.Fatalf("%q accepted with non-public host %s", raw, a)
		}
		if a, ok := legacyIPv4(host); ok && (a.String() != host || !Public(a)) {
			t.Fatalf("%q accepted with numeric host %q (%s)", raw, host, a)
		}
		if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") &&
			!strings.HasPrefix(strings.ToLower(raw), "http") {
			t.Fatalf("%q accepted without an http(s) scheme", raw)
		}
	})
}

func FuzzFlatten(f *testing.F) {
	for _, s := range []string{`{"a":{"b":1}}`, `[1,true,{"x":2.5}]`, `{"a":1e999}`, `nope`, `{"a":[[[[1]]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range Flatten(b) {
			if k == "" {
				t.Fatalf("empty metric name from %q", b)
			}
		}
	})
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
