package returnurl

import (
	"errors"
	"net"
	"strconv"
	"strings"
)

// browserParse extracts scheme and host from s the way the WHATWG URL
// standard does it in a browser's address bar (no base URL). It is written
// independently of Check, from the standard's state machine, so that the
// fuzz test compares two readings of the same string. It reports an error
// where a browser would fail, and also where the answer would depend on
// IDNA mapping (a non-ASCII host), which this oracle does not implement:
// Check must never accept such a string anyway.
func browserParse(s string) (scheme, host string, err error) {
	// Leading and trailing C0 controls and spaces are stripped, tabs and
	// newlines removed everywhere.
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)

	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !isAlpha(s[0]) {
		return "", "", errors.New("no scheme")
	}
	for i := 1; i < colon; i++ {
		c := s[i]
		if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return "", "", errors.New("no scheme")
		}
	}
	scheme = strings.ToLower(s[:colon])
	rest := s[colon+1:]
	switch scheme {
	case "http", "https", "ws", "wss", "ftp":
	default:
		return scheme, "", nil // not special: no host a redirect could reach
	}

	// Special authority ignore slashes: any run of / and \.
	rest = strings.TrimLeft(rest, `/\`)
	end := strings.IndexAny(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}

	// Host state: the first ':' outside brackets starts the port.
	hostPart, port := authority, ""
	inBrackets := false
	for i := 0; i < len(authority); i++ {
		switch authority[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				hostPart, port = authority[:i], authority[i+1:]
				i = len(authority)
			}
		}
	}
	if hostPart == "" {
		return scheme, "", errors.New("empty host")
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return scheme, "", errors.New("bad port")
		}
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n > 65535 {
			return scheme, "", errors.New("bad port")
		}
	}

	host, err = browserHost(hostPart)
	return scheme, host, err
}

// browserHost is the standard's host parser for special schemes.
func browserHost(in string) (string, error) {
	if strings.HasPrefix(in, "[") {
		if !strings.HasSuffix(in, "]") {
			return "", errors.New("unclosed IPv6")
		}
		ip := net.ParseIP(in[1 : len(in)-1])
		if ip == nil {
			return "", errors.New("bad IPv6")
		}
		return ip.String(), nil
	}
	decoded := percentDecode(in)
	for i := 0; i < len(decoded); i++ {
		if decoded[i] >= 0x80 {
			return "", errors.New("non-ASCII host needs IDNA")
		}
	}
	domain := strings.ToLower(decoded)
	if domain == "" {
		return "", errors.New("empty host")
	}
	for i := 0; i < len(domain); i++ {
		c := domain[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0 {
			return "", errors.New("forbidden domain code point")
		}
	}
	if endsInNumber(domain) {
		return parseIPv4(domain)
	}
	return domain, nil
}

// percentDecode decodes %XX and leaves a '%' without two hex digits as is,
// as the standard does.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func endsInNumber(domain string) bool {
	parts := strings.Split(domain, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

func parseIPv4(domain string) (string, error) {
	parts := strings.Split(domain, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", errors.New("too many IPv4 parts")
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", errors.New("bad IPv4 part")
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", errors.New("IPv4 part over 255")
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", errors.New("IPv4 last part too large")
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).String(), nil
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
