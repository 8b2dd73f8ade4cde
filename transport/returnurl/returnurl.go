// Package returnurl decides whether a return URL handed to the waiting room
// may be followed, so that the waiting room never becomes an open redirect.
//
// The check is deliberately narrower than what a URL parser accepts. A
// return URL is produced by embed.js from location.href, so a legitimate one
// is always an absolute, percent-encoded, printable-ASCII http(s) URL of one
// of the room's own shop pages. Anything else is refused rather than
// repaired, because every repair is a place where this package and a browser
// could disagree about the host.
package returnurl

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// MaxLength is the longest return URL Check accepts, in bytes.
const MaxLength = 2048

// TokenParam is the query parameter that carries the admission token back
// to the shop. StripToken removes it.
const TokenParam = "aditus_queue_token"

// Check reports whether raw is a return URL the waiting room may redirect
// to, given the room's configured shop domains, and returns it parsed and
// normalised (host lower-cased, trailing dot removed).
//
// Accepted are only absolute URLs of the form scheme://host[:port][/path]
// [?query][#fragment] where
//   - the scheme is https, or http when the host is localhost, 127.0.0.1 or
//     [::1] (so local set-ups and tests work without certificates);
//   - the host, lower-cased and without port and trailing dot, equals one of
//     domains exactly. An entry "shop.example.com" admits that host only, not
//     "evil.shop.example.com" and not "shop.example.com.evil.com". An entry
//     "*.example.com" admits every host strictly below example.com (not
//     example.com itself); it needs at least two labels after "*." and never
//     admits punycode ("xn--") labels, which must be listed literally;
//   - the whole URL is at most MaxLength bytes of printable ASCII: no
//     whitespace, no control characters, no raw non-ASCII (a browser's
//     location.href is always percent-encoded), and so is the form it is
//     handed on in (u.String());
//   - the authority holds nothing but host name characters, brackets for an
//     IPv6 literal and a numeric port: no userinfo ("@"), no
//     percent-encoding, no backslash;
//   - the path holds no backslash (browsers read it as a slash).
//
// Domain entries are compared case-insensitively and without a trailing dot;
// entries that are not plain host names never match.
func Check(raw string, domains []string) (u *url.URL, ok bool) {
	scheme, ok := plainText(raw)
	if !ok {
		return nil, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Scheme != scheme {
		return nil, false
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	if host == "" || !validHost(host) {
		return nil, false
	}
	port := u.Port()
	if port != "" && !validPort(port) {
		return nil, false
	}
	if scheme == "http" && !loopback(host) {
		return nil, false
	}
	if !allowed(host, domains) {
		return nil, false
	}

	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	if port != "" {
		hostport += ":" + port
	}
	u.Host = hostport
	// The URL is handed on as u.String(), which escapes what the raw form
	// left bare (a "#" inside the fragment becomes "%23"): that form, too,
	// must fit, or the next Check of it (the hosted page's) would refuse
	// what this one accepted.
	if len(u.String()) > MaxLength {
		return nil, false
	}
	return u, true
}

// plainText checks raw as text, before any parser reads it: its length and
// characters, its scheme (returned lower-cased), its authority and its
// path.
func plainText(raw string) (scheme string, ok bool) {
	if raw == "" || len(raw) > MaxLength {
		return "", false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	scheme, rest, found := strings.Cut(raw, "://")
	if !found {
		return "", false
	}
	scheme = strings.ToLower(scheme)
	if scheme != "https" && scheme != "http" {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if !plainAuthority(authority) {
		return "", false
	}
	path := rest[end:]
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if strings.ContainsRune(path, '\\') {
		return "", false
	}
	return scheme, true
}

// validPort reports whether port is a number of 1 to 65535 written without
// leading zeros.
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == port
}

// StripToken removes every TokenParam parameter from u's query and keeps
// the other parameters exactly as they were written (order and encoding),
// so the shop receives the URL it asked for. It modifies u in place.
func StripToken(u *url.URL) {
	if u == nil || u.RawQuery == "" {
		return
	}
	parts := strings.Split(u.RawQuery, "&")
	kept := parts[:0]
	for _, p := range parts {
		key, _, _ := strings.Cut(p, "=")
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if key == TokenParam {
			continue
		}
		kept = append(kept, p)
	}
	u.RawQuery = strings.Join(kept, "&")
	if u.RawQuery == "" {
		u.ForceQuery = false
	}
}

// WithToken returns target with the admission token tok as the last query
// parameter, every other parameter kept exactly as written (order and
// encoding) and any token already in it removed; target itself is returned
// when it does not parse.
func WithToken(target, tok string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	StripToken(u)
	param := TokenParam + "=" + url.QueryEscape(tok)
	if u.RawQuery == "" {
		u.RawQuery = param
	} else {
		u.RawQuery += "&" + param
	}
	u.ForceQuery = false
	return u.String()
}

// plainAuthority reports whether a holds only host name characters, an
// optional bracketed IPv6 literal and an optional port: no "@", "%", "\"
// or anything a browser might decode into one of them.
func plainAuthority(a string) bool {
	if a == "" {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == ':', c == '[', c == ']':
		default:
			return false
		}
	}
	return true
}

// validHost reports whether h (lower-case, no trailing dot) is an IP
// literal or a host name of letter-digit-hyphen labels. Underscores are
// tolerated because real shop hosts carry them and browsers accept them.
func validHost(h string) bool {
	if strings.Contains(h, ":") {
		ip := net.ParseIP(h)
		return ip != nil && ip.To4() == nil
	}
	if len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	if last := labels[len(labels)-1]; numeric(last) {
		// A browser reads a host whose last label is a number as IPv4 and
		// normalises it ("127.1", "0x7f.0.0.1", "2130706433"), so only the
		// canonical dotted quad can be compared as text.
		ip := net.ParseIP(h)
		return ip != nil && ip.To4() != nil && ip.String() == h
	}
	for _, label := range labels {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// numeric reports whether label is what the URL standard's IPv4 parser
// takes for a number: decimal digits, or "0x" followed by hex digits.
func numeric(label string) bool {
	if label == "" {
		return false
	}
	digits := label
	if strings.HasPrefix(label, "0x") {
		digits = label[2:]
		for i := 0; i < len(digits); i++ {
			c := digits[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// allowed reports whether host matches one of domains, exactly or through a
// "*." entry as documented on Check.
func allowed(host string, domains []string) bool {
	for _, d := range domains {
		d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
		if d == "" {
			continue
		}
		if d == host {
			return true
		}
		parent, ok := strings.CutPrefix(d, "*.")
		if !ok || strings.Count(parent, ".") < 1 || !validHost(parent) || net.ParseIP(parent) != nil {
			continue
		}
		sub, ok := strings.CutSuffix(host, "."+parent)
		if !ok || sub == "" || strings.Contains(host, ":") {
			continue
		}
		if punycode(sub) {
			continue
		}
		return true
	}
	return false
}

// punycode reports whether any dot-separated label of s is an IDNA
// A-label ("xn--…"), which may render as a look-alike of another name.
func punycode(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if strings.HasPrefix(label, "xn--") {
			return true
		}
	}
	return false
}
