// Package clientaddr answers one security question: which address did a
// request come from? Every per-address budget (bypass-code attempts, failed
// admin sign-ins, new places in line) keys on its answer, so a header a
// client can write must never choose it.
//
// The peer's own address (the TCP connection's) is the answer unless that
// peer is a proxy the operator named as trusted. Only then is
// X-Forwarded-For read, from the right: each trusted hop is skipped, and the
// first address that is not trusted is the client. An address a client
// wrote at the left end of the header is never reached while a trusted
// proxy appended the real one after it. A header that does not parse stops
// the walk at the last address known to be good.
package clientaddr

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// maxHops bounds the X-Forwarded-For entries read from one request: a
// chain of proxies is a few hops long, and a header of a million commas
// must cost no more than one of ten.
const maxHops = 16

// ForwardingHeaders are the headers by which a proxy speaks for its
// client: believed only from trusted proxies, removed from everyone
// else's requests.
var ForwardingHeaders = []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "Forwarded"}

// ParsePrefixes parses CIDRs ("10.0.0.0/8", "2001:db8::/32") or single
// addresses ("192.0.2.7", taken as /32 or /128). Empty entries are skipped;
// anything else that does not parse is an error naming the entry.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: want a CIDR such as 10.0.0.0/8", s)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR such as 10.0.0.0/8", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Resolver finds a request's client address. The zero value and a resolver
// with no trusted prefixes trust no header: the peer is the client. It is
// safe for concurrent use (it is never written after NewResolver).
type Resolver struct {
	trusted []netip.Prefix
}

// NewResolver returns a resolver that honours forwarding headers only from
// peers inside trusted.
func NewResolver(trusted []netip.Prefix) *Resolver {
	return &Resolver{trusted: append([]netip.Prefix(nil), trusted...)}
}

// Trusts reports whether a is one of the trusted proxies.
func (r *Resolver) Trusts(a netip.Addr) bool {
	if r == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client returns the request's client address: the peer's, or, when the
// peer is trusted, the right-most X-Forwarded-For address that is not. It
// returns the zero Addr only when the peer's own address does not parse
// (a request that did not come over TCP, such as one built in a test).
func (r *Resolver) Client(req *http.Request) netip.Addr {
	peer := Peer(req)
	if !r.Trusts(peer) {
		return peer
	}
	return r.walk(peer, req.Header.Values("X-Forwarded-For"))
}

// walk reads the forwarded-for values from the right, starting from a
// trusted peer, and returns the first untrusted address. A malformed entry
// ends the walk at the last good address: what stands left of it was
// written by somebody no trusted proxy vouches for.
func (r *Resolver) walk(peer netip.Addr, values []string) netip.Addr {
	client := peer
	hops := 0
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			if hops++; hops > maxHops {
				return client
			}
			var part string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				part, v = v[j+1:], v[:j]
			} else {
				part, v = v, ""
			}
			a, ok := parseHop(part)
			if !ok {
				return client
			}
			client = a
			if !r.Trusts(a) {
				return a
			}
		}
	}
	return client
}

// parseHop parses one X-Forwarded-For entry: an address, with or without
// a port, IPv6 optionally in brackets.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Addr{}, false
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// Secure reports whether the client reached us over TLS: the connection
// itself, or X-Forwarded-Proto "https" set by a trusted peer (the last
// value, the one the nearest proxy wrote).
func (r *Resolver) Secure(req *http.Request) bool {
	if req.TLS != nil {
		return true
	}
	if !r.Trusts(Peer(req)) {
		return false
	}
	vals := req.Header.Values("X-Forwarded-Proto")
	if len(vals) == 0 {
		return false
	}
	last := vals[len(vals)-1]
	if j := strings.LastIndexByte(last, ','); j >= 0 {
		last = last[j+1:]
	}
	return strings.EqualFold(strings.TrimSpace(last), "https")
}

// Peer returns the address of the connection's other end, or the zero Addr
// when RemoteAddr does not parse.
func Peer(req *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(req.RemoteAddr); err == nil {
		return ap.Addr().WithZone("").Unmap()
	}
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.WithZone("").Unmap()
}

// Key is the budget key of an address: an IPv4 address alone (/32), an
// IPv6 address by its /64, the block one subscriber is given, so that a
// client cannot mint a fresh budget per address of its own prefix. The
// zero Addr has the key "unknown": requests whose address cannot be told
// share one budget rather than having none.
func Key(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}

// Wider are the groups of budget key (Key) that hold budgets of their own,
// widest first: an IPv6 /64's /48 and /56, the blocks a site or a
// subscriber is given, so that one holder of a prefix cannot mint a fresh
// budget per /64 of it. An IPv4 address has none.
func Wider(key string) []string {
	p, err := netip.ParsePrefix(key)
	if err != nil || !p.Addr().Is6() || p.Bits() != 64 {
		return nil
	}
	return []string{
		netip.PrefixFrom(p.Addr(), 48).Masked().String(),
		netip.PrefixFrom(p.Addr(), 56).Masked().String(),
	}
}

// WiderScales are the budgets of the groups Wider returns, in budgets of
// one key: a /48 holds 32 of them and a /56 8, room for a household's or
// an office's devices (a carrier that gives each phone a /64 of a shared
// /48 needs its clients to come through a trusted proxy, or wider
// budgets).
var WiderScales = []float64{32, 8}
