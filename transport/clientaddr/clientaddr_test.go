package clientaddr

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func mustPrefixes(t testing.TB, list ...string) []netip.Prefix {
	t.Helper()
	p, err := ParsePrefixes(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(remote string, xff ...string) *http.Request {
	r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
	for _, v := range xff {
		r.Header.Add("X-Forwarded-For", v)
	}
	return r
}

func TestParsePrefixes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
		err  bool
	}{
		{"cidrs", []string{"10.0.0.0/8", " 2001:db8::/32 "}, []string{"10.0.0.0/8", "2001:db8::/32"}, false},
		{"single addresses", []string{"192.0.2.7", "::1"}, []string{"192.0.2.7/32", "::1/128"}, false},
		{"masked", []string{"10.1.2.3/8"}, []string{"10.0.0.0/8"}, false},
		{"mapped IPv4 is IPv4", []string{"::ffff:192.0.2.7"}, []string{"192.0.2.7/32"}, false},
		{"empty entries skipped", []string{"", " "}, nil, false},
		{"bad cidr", []string{"10.0.0.0/33"}, nil, true},
		{"host name", []string{"proxy.example.com"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePrefixes(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if strings.Join(s, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v", s, tc.want)
			}
		})
	}
}

func TestClient(t *testing.T) {
	r := NewResolver(mustPrefixes(t, "10.0.0.0/8", "fd00::/8"))
	for _, tc := range []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"no proxy", "198.51.100.4:5000", nil, "198.51.100.4"},
		{"untrusted peer's header ignored", "198.51.100.4:5000", []string{"1.2.3.4"}, "198.51.100.4"},
		{"trusted peer, one hop", "10.0.0.2:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"client-written left entry never reached", "10.0.0.2:80", []string{"6.6.6.6, 203.0.113.9"}, "203.0.113.9"},
		{"chain of trusted proxies skipped", "10.0.0.2:80", []string{"203.0.113.9, 10.0.0.7, 10.0.0.8"}, "203.0.113.9"},
		{"several header lines read as one list", "10.0.0.2:80", []string{"6.6.6.6, 203.0.113.9", "10.0.0.7"}, "203.0.113.9"},
		{"malformed entry stops at last good", "10.0.0.2:80", []string{"garbage, 10.0.0.7"}, "10.0.0.7"},
		{"malformed nearest entry keeps the peer", "10.0.0.2:80", []string{"6.6.6.6, nonsense"}, "10.0.0.2"},
		{"trusted peer, no header", "10.0.0.2:80", nil, "10.0.0.2"},
		{"entry with port", "10.0.0.2:80", []string{"203.0.113.9:4711"}, "203.0.113.9"},
		{"IPv6 entry in brackets with port", "10.0.0.2:80", []string{"[2001:db8::5]:443"}, "2001:db8::5"},
		{"IPv6 peer trusted", "[fd00::1]:80", []string{"2001:db8::5"}, "2001:db8::5"},
		{"mapped IPv4 peer", "[::ffff:10.0.0.2]:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"zone in entry refused", "10.0.0.2:80", []string{"fe80::1%eth0"}, "10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Client(request(tc.remote, tc.xff...))
			if got.String() != tc.want {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
}

func TestClientTrustsNothingByDefault(t *testing.T) {
	for _, r := range []*Resolver{nil, {}, NewResolver(nil)} {
		if got := r.Client(request("10.0.0.2:80", "203.0.113.9")); got.String() != "10.0.0.2" {
			t.Fatalf("got %v, want the peer", got)
		}
	}
}

func TestClientBoundsHops(t *testing.T) {
	r := NewResolver(mustPrefixes(t, "10.0.0.0/8"))
	// Past the bound, the walk stops at the last trusted hop it read:
	// the client gains nothing by making the header longer.
	xff := "203.0.113.9" + strings.Repeat(", 10.0.0.7", 100)
	got := r.Client(request("10.0.0.2:80", xff))
	if got.String() != "10.0.0.7" {
		t.Fatalf("got %v, want the last hop read, 10.0.0.7", got)
	}
}

func TestSecure(t *testing.T) {
	r := NewResolver(mustPrefixes(t, "10.0.0.0/8"))
	for _, tc := range []struct {
		name   string
		remote string
		tls    bool
		proto  []string
		want   bool
	}{
		{"plain", "198.51.100.4:1", false, nil, false},
		{"tls", "198.51.100.4:1", true, nil, true},
		{"untrusted header ignored", "198.51.100.4:1", false, []string{"https"}, false},
		{"trusted https", "10.0.0.2:1", false, []string{"https"}, true},
		{"trusted http", "10.0.0.2:1", false, []string{"http"}, false},
		{"nearest value wins", "10.0.0.2:1", false, []string{"https, http"}, false},
		{"case", "10.0.0.2:1", false, []string{"HTTPS"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(tc.remote)
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			for _, v := range tc.proto {
				req.Header.Add("X-Forwarded-Proto", v)
			}
			if got := r.Secure(req); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
	} {
		if got := Key(netip.MustParseAddr(tc.in)); got != tc.want {
			t.Errorf("Key(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := Key(netip.Addr{}); got != "unknown" {
		t.Errorf("Key(zero) = %s, want unknown", got)
	}
}

func TestPeer(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7:80", "192.0.2.7"},
		{"[2001:db8::1]:80", "2001:db8::1"},
		{"[fe80::1%eth0]:80", "fe80::1"},
		{"192.0.2.7", "192.0.2.7"},
		{"pipe", "invalid IP"},
		{"", "invalid IP"},
	} {
		if got := Peer(request(tc.in)); got.String() != tc.want {
			t.Errorf("Peer(%q) = %v, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzClient: whatever the headers say, the answer is the peer or an
// address written in the header; it is the peer whenever the peer is not
// trusted; and it is never a trusted address unless the header ran out of
// untrusted ones or stopped at a bad entry.
func FuzzClient(f *testing.F) {
	for _, s := range []string{"203.0.113.9", "6.6.6.6, 203.0.113.9, 10.0.0.7", "[2001:db8::5]:443", "x,,y", "10.0.0.1,", strings.Repeat("1.2.3.4,", 40)} {
		f.Add("10.0.0.2:80", s)
		f.Add("198.51.100.4:80", s)
	}
	r := NewResolver([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	f.Fuzz(func(t *testing.T, remote, xff string) {
		req := request(remote, xff)
		got := r.Client(req)
		peer := Peer(req)
		if !r.Trusts(peer) {
			if got != peer {
				t.Fatalf("untrusted peer %v, got %v", peer, got)
			}
			return
		}
		if got == peer {
			return
		}
		found := false
		for _, e := range strings.Split(xff, ",") {
			if a, ok := parseHop(e); ok && a == got {
				found = true
			}
		}
		if !found {
			t.Fatalf("got %v, which no entry of %q names", got, xff)
		}
		_ = Key(got)
	})
}

func TestWider(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"2001:db8:1:2::/64", []string{"2001:db8:1::/48", "2001:db8:1::/56"}},
		{"2001:db8:1:2ff::/64", []string{"2001:db8:1::/48", "2001:db8:1:200::/56"}},
		{"192.0.2.1", nil},
		{"unknown", nil},
		{"2001:db8::/48", nil},
	} {
		if got := Wider(tc.key); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Wider(%q): got %v, want %v", tc.key, got, tc.want)
		}
	}
}
