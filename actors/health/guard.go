package health

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which health URLs and addresses may be fetched. The zero
// value refuses every non-public address and resolves with
// net.DefaultResolver.
type Guard struct {
	// AllowPrivate turns the address check off (serve
	// --allow-private-health-urls): for tests and for shops on a private
	// network. The URL's shape is still checked.
	AllowPrivate bool
	// Resolver replaces net.DefaultResolver (tests).
	Resolver Resolver
}

// nonPublic are the prefixes no health check may reach, beyond what
// netip.Addr's own predicates name (loopback, private, link-local,
// multicast, unspecified).
var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // carrier-grade NAT
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved, and the broadcast address
		"::/96",           // IPv4-compatible (deprecated)
		"64:ff9b::/96",    // NAT64: may reach any IPv4 address
		"64:ff9b:1::/48",  // local NAT64
		"100::/64",        // discard
		"2001::/32",       // Teredo
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4: embeds any IPv4 address
		"fec0::/10",       // site-local (deprecated)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Public reports whether a is a globally reachable unicast address. An
// IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() ||
		a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// CheckURL checks raw before it is stored or fetched: an absolute http(s)
// URL without credentials whose host is written plainly (IPv4 in dotted
// decimal) and resolves only to public addresses. The answer is meant for
// the operator: it names the reason, never an address it looked up.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || len(raw) > 2048 {
		return refused("must be an absolute http(s) URL without credentials")
	}
	host := u.Hostname()
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return refused("port %q is not valid", p)
		}
	}
	if a, ok := legacyIPv4(host); ok {
		if a.String() != host {
			return refused("write IPv4 addresses in dotted decimal (%s)", a)
		}
	}
	if strings.ContainsAny(host, "%") {
		return refused("zoned addresses are not allowed")
	}
	if g.AllowPrivate {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !Public(a) {
			return refused("%s is not a public address", host)
		}
		return nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return refused("host %s cannot be resolved", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return refused("host %s resolves to a non-public address", host)
		}
	}
	return nil
}

// Control is a net.Dialer Control function: it refuses, at connect time, a
// connection to a non-public address, so a name that resolved to a public
// address when checked and to a private one now (DNS rebinding) is still
// refused.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refused("cannot parse the address dialled")
	}
	if !Public(ap.Addr()) {
		return refused("the health URL's host resolves to a non-public address")
	}
	return nil
}

// legacyIPv4 parses the forms inet_aton accepts (1 to 4 parts, each
// decimal, octal with a leading 0, or hex with 0x), which some resolvers
// and proxies still honour: "2130706433", "0x7f.1", "0177.0.0.1".
func legacyIPv4(host string) (netip.Addr, bool) {
	if host == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		n |= vals[i] << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}
