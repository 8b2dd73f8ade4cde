// Package canon computes the one path a request stands for, before anybody
// decides anything about it. A proxy that matches rooms, rules and bypass
// paths on the raw path while the server behind it normalises that path
// lets `/static/../checkout`, `//checkout` or `/static/%2e%2e/checkout`
// walk around a room that guards `/checkout`: nginx, Apache, Tomcat and IIS
// all serve `/checkout` for them. Deciding on the canonical path and
// forwarding that same path closes the gap whatever the upstream does.
//
// The canonical form of an escaped path (as sent on the request line):
//
//   - percent-encodings of unreserved characters (letters, digits, - . _ ~)
//     are decoded; every other encoding is kept, its hex digits upper-case;
//     a byte that may not stand literally in a path (space, non-ASCII …) is
//     encoded;
//   - runs of slashes are merged into one (as nginx's merge_slashes);
//   - the dot segments `.` and `..` are removed (RFC 3986, 5.2.4);
//   - matrix parameters (`/checkout;jsessionid=…`) stay in the path that is
//     forwarded, but matching sees the path without them (Match).
//
// What no canonical form covers is refused (ErrRefused, an HTTP 400): a
// path that does not start with `/`, a `\`, an encoded `/` or `\`, a NUL
// or other control character (literal or encoded), a `..` that would climb
// above the root, a bad or double percent-encoding (`%zz`, `%252e`), a
// path that does not decode to valid UTF-8, and a dot segment carrying
// matrix parameters (`/..;x/`, which Tomcat reads as `..`).
package canon

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ErrRefused is wrapped by every error of Path: the request has no
// canonical form and is answered 400.
var ErrRefused = errors.New("path refused")

// MaxPath bounds the escaped path Path reads; a longer one is refused
// (nginx's default request line buffer is 8 KB).
const MaxPath = 8 << 10

// Request is the canonical form of a request's path.
type Request struct {
	// Escaped is the path to forward: canonical, percent-encoded.
	Escaped string
	// Decoded is Escaped with every percent-encoding decoded.
	Decoded string
	// Match is the path rooms, rules and bypass paths compare with:
	// Decoded without matrix parameters.
	Match string
}

// Of returns the canonical form of r's path, read from the request line
// as sent (r.URL.Path has lost the difference between `/` and `%2F`).
func Of(r *http.Request) (Request, error) {
	return Path(rawPath(r))
}

// rawPath is the escaped path of r's request-target: origin-form
// (`/a?b`) or absolute-form (`http://host/a?b`); r.URL's when the request
// was not read by a server.
func rawPath(r *http.Request) string {
	t := r.RequestURI
	if t == "" {
		return r.URL.EscapedPath()
	}
	if !strings.HasPrefix(t, "/") {
		scheme, rest, ok := strings.Cut(t, "://")
		if !ok || strings.ContainsAny(scheme, "/?") {
			return t // refused: no path
		}
		i := strings.IndexAny(rest, "/?")
		if i < 0 || rest[i] == '?' {
			return "/"
		}
		t = rest[i:]
	}
	p, _, _ := strings.Cut(t, "?")
	return p
}

// On returns a shallow copy of r whose URL and RequestURI carry the
// canonical path c (and r's query as it came), for the handlers that
// forward or serve it.
func (c Request) On(r *http.Request) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = c.Decoded, ""
	if u.EscapedPath() != c.Escaped {
		u.RawPath = c.Escaped // as url.URL keeps it: only when not the default
	}
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	return r2
}

// Path returns the canonical form of an escaped path, or an error wrapping
// ErrRefused that says why there is none.
func Path(escaped string) (Request, error) {
	if len(escaped) > MaxPath {
		return Request{}, refuse("longer than %d bytes", MaxPath)
	}
	if !strings.HasPrefix(escaped, "/") {
		return Request{}, refuse("does not start with /")
	}
	if plain(escaped) {
		return Request{Escaped: escaped, Decoded: escaped, Match: escaped}, nil
	}
	segs, err := segments(escaped)
	if err != nil {
		return Request{}, err
	}
	segs, err = removeDots(segs)
	if err != nil {
		return Request{}, err
	}
	c := build(segs)
	if len(c.Escaped) > MaxPath {
		// Escaping may lengthen a path (a '#' becomes %23): the canonical
		// form keeps the bound too, so that it is canonical itself.
		return Request{}, refuse("longer than %d bytes", MaxPath)
	}
	return c, nil
}

// plain reports whether escaped is canonical as it stands, the common
// case, which then costs no allocation: only characters that stand for
// themselves (no encoding, no matrix parameters), no empty segment but a
// trailing one, no dot segment.
func plain(escaped string) bool {
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		switch {
		case c == '/':
			if i+1 < len(escaped) && escaped[i+1] == '/' {
				return false
			}
		case c == '.':
			if isDotSegment(escaped, i) {
				return false
			}
		case c == ';' || !literalOK[c]:
			return false
		}
	}
	return true
}

// isDotSegment reports whether the '.' at escaped[i] begins a `.` or `..`
// segment.
func isDotSegment(escaped string, i int) bool {
	if escaped[i-1] != '/' {
		return false
	}
	rest := strings.TrimPrefix(escaped[i+1:], ".")
	return rest == "" || rest[0] == '/'
}

// segment is one path segment, normalised: its escaped text and its
// decoded text, both without matrix parameters, and its parameters
// (with the leading `;`, escaped and decoded).
type segment struct {
	escaped, decoded, params, decodedParams string
}

// segments splits escaped at its slashes, merging runs of them, and
// normalises each segment's encoding. A trailing slash is kept as an empty
// last segment.
func segments(escaped string) ([]segment, error) {
	parts := strings.Split(escaped[1:], "/")
	out := make([]segment, 0, len(parts))
	for i, p := range parts {
		if p == "" && i < len(parts)-1 {
			continue // merged slashes
		}
		s, err := normalise(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// normalise splits off one segment's matrix parameters (after its first
// literal `;`) and normalises the encoding of both parts.
func normalise(p string) (segment, error) {
	name, params, _ := strings.Cut(p, ";")
	var s segment
	var err error
	if s.escaped, s.decoded, err = encoding(name); err != nil {
		return segment{}, err
	}
	if params == "" && !strings.Contains(p, ";") {
		return s, nil
	}
	if s.decoded == "." || s.decoded == ".." {
		return segment{}, refuse("a dot segment with matrix parameters")
	}
	esc, dec, err := encoding(params)
	if err != nil {
		return segment{}, err
	}
	s.params, s.decodedParams = ";"+esc, ";"+dec
	return s, nil
}

// encoding decodes the unreserved encodings of text and checks the rest;
// it returns the text escaped canonically and decoded.
func encoding(text string) (escaped, decoded string, err error) {
	var esc, dec strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '%' {
			if err := literal(c); err != nil {
				return "", "", err
			}
			writeByte(&esc, c)
			dec.WriteByte(c)
			continue
		}
		b, err := percent(text, i)
		if err != nil {
			return "", "", err
		}
		i += 2
		dec.WriteByte(b)
		if unreserved(b) {
			esc.WriteByte(b)
		} else {
			writeEncoded(&esc, b)
		}
	}
	decoded = dec.String()
	if !utf8.ValidString(decoded) {
		return "", "", refuse("not valid UTF-8")
	}
	if doubleEncoded(decoded) {
		return "", "", refuse("a double percent-encoding")
	}
	return esc.String(), decoded, nil
}

// literal checks a byte that stands unencoded in the path.
func literal(c byte) error {
	switch {
	case c == '\\':
		return refuse(`contains \`)
	case c < 0x20 || c == 0x7f:
		return refuse("contains a control character")
	}
	return nil
}

// percent decodes the encoding at p[i] ('%'), refusing what is malformed
// and an encoded separator or control character.
func percent(p string, i int) (byte, error) {
	if i+2 >= len(p) {
		return 0, refuse("a truncated percent-encoding")
	}
	hi, ok1 := unhex(p[i+1])
	lo, ok2 := unhex(p[i+2])
	if !ok1 || !ok2 {
		return 0, refuse("a malformed percent-encoding")
	}
	b := hi<<4 | lo
	switch {
	case b == '/':
		return 0, refuse("an encoded /")
	case b == '\\':
		return 0, refuse(`an encoded \`)
	case b < 0x20 || b == 0x7f:
		return 0, refuse("an encoded control character")
	}
	return b, nil
}

// doubleEncoded reports whether a decoded text still holds a
// percent-encoding (`%252e` decodes to `%2e`): a server that decodes once
// more would see another path.
func doubleEncoded(decoded string) bool {
	for i := strings.IndexByte(decoded, '%'); i >= 0; {
		if i+2 < len(decoded) && isHex(decoded[i+1]) && isHex(decoded[i+2]) {
			return true
		}
		j := strings.IndexByte(decoded[i+1:], '%')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// removeDots removes `.` and `..` segments (RFC 3986, 5.2.4, on segments
// already split), refusing a `..` above the root. A path ending in a dot
// segment ends with a slash.
func removeDots(segs []segment) ([]segment, error) {
	out := make([]segment, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s.decoded {
		case ".":
		case "..":
			if len(out) == 0 {
				return nil, refuse("climbs above the root")
			}
			out = out[:len(out)-1]
		default:
			out = append(out, s)
			continue
		}
		if last {
			out = append(out, segment{})
		}
	}
	return out, nil
}

// build joins the segments into the three forms of the path.
func build(segs []segment) Request {
	var esc, dec, match strings.Builder
	for i, s := range segs {
		esc.WriteByte('/')
		esc.WriteString(s.escaped)
		esc.WriteString(s.params)
		dec.WriteByte('/')
		dec.WriteString(s.decoded)
		dec.WriteString(s.decodedParams)
		if s.decoded == "" && i < len(segs)-1 {
			continue // "/;x/checkout" matches as "/checkout"
		}
		match.WriteByte('/')
		match.WriteString(s.decoded)
	}
	if len(segs) == 0 {
		return Request{Escaped: "/", Decoded: "/", Match: "/"}
	}
	return Request{Escaped: esc.String(), Decoded: dec.String(), Match: match.String()}
}

// writeByte writes c as it may stand in a canonical path: literal when
// RFC 3986 allows it in a segment (unreserved, sub-delims, ':' and '@'),
// percent-encoded otherwise.
func writeByte(b *strings.Builder, c byte) {
	if literalOK[c] {
		b.WriteByte(c)
		return
	}
	writeEncoded(b, c)
}

// writeEncoded writes c percent-encoded, with upper-case hex.
func writeEncoded(b *strings.Builder, c byte) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&15])
}

// literalOK are the bytes that stand for themselves in a segment.
var literalOK = func() (t [256]bool) {
	for c := range 256 {
		t[c] = unreserved(byte(c)) || strings.IndexByte("!$&'()*+,;=:@", byte(c)) >= 0
	}
	return t
}()

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	_, ok := unhex(c)
	return ok
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func refuse(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

// HasPrefix reports whether the match path p starts with prefix, ignoring
// case when fold is set (for upstreams that ignore case; Unicode's simple
// folding, so that the Kelvin sign matches k as IIS would have it).
func HasPrefix(p, prefix string, fold bool) bool {
	if !fold {
		return strings.HasPrefix(p, prefix)
	}
	return strings.HasPrefix(strings.ToLower(p), strings.ToLower(prefix))
}
