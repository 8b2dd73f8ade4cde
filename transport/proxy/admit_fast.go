package proxy

import (
	"bytes"
	"net"
	"net/netip"
	"sync"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/transport/canon"
)

// maxFastRooms bounds the rooms one request can pass on the fast path;
// a request under more takes the standard one.
const maxFastRooms = 4

// fastAdmission is what the fast path learned of a request it takes.
type fastAdmission struct {
	adm  [maxFastRooms]admission
	n    int
	host []byte
}

// admitFast serves the common request entirely on fasthttp's types: a GET
// without a body, on a canonical path (as it came: nothing to rewrite),
// from an untrusted peer, to a location that forwards, whose every
// waiting room the visitor's cookie opens as admitted and not yet due for
// renewal. It reports false, having answered nothing and changed nothing,
// for any other request, which the standard path then decides whole.
func (h *Handler) admitFast(ctx *fasthttp.RequestCtx) bool {
	hdr := &ctx.Request.Header
	// A request without Content-Length or chunking has the length -2.
	if cl := hdr.ContentLength(); !hdr.IsGet() || !hdr.IsHTTP11() || cl != 0 && cl != -2 || len(hdr.Peek("Upgrade")) > 0 {
		return false
	}
	uri := hdr.RequestURI()
	if len(uri) == 0 || uri[0] != '/' {
		return false
	}
	path := uri
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		path = uri[:i]
	}
	p := unsafe.String(unsafe.SliceData(path), len(path))
	if c, err := canon.Path(p); err != nil || c.Match != p || c.Escaped != p {
		return false
	}
	a := admissions.Get().(*fastAdmission)
	defer func() { *a = fastAdmission{}; admissions.Put(a) }()
	rt := h.fastRoute(hdr.Host(), p, a)
	if rt == nil || rt.fast == nil || h.front.addrs.Trusts(peerAddr(ctx)) {
		return false
	}
	bypassed, ok := fastBypass(rt, p, hdr.UserAgent())
	if !ok {
		return false
	}
	if !bypassed && !h.fastRooms(ctx, rt, p, a) {
		return false
	}
	for _, ad := range a.adm[:a.n] {
		ad.gate.touch(ad.visitor.ID)
	}
	rt.fast.serveVisitor(ctx, a)
	return true
}

var admissions = sync.Pool{New: func() any { return new(fastAdmission) }}

// fastRoute is the location of a Host header (with a numeric port or
// none) and a canonical path; nil when there is none or the Host is of
// another form.
func (h *Handler) fastRoute(host []byte, path string, a *fastAdmission) *route {
	a.host = host
	name := host
	if i := bytes.LastIndexByte(host, ':'); i >= 0 {
		for _, c := range host[i+1:] {
			if c < '0' || c > '9' {
				return nil
			}
		}
		name = host[:i]
	}
	var buf [256]byte
	if len(name) > len(buf) || bytes.IndexByte(name, '[') >= 0 {
		return nil
	}
	low := buf[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	for _, rt := range h.hosts[string(low)] {
		if canon.HasPrefix(path, rt.loc.Path, rt.loc.CaseInsensitive) {
			return rt
		}
	}
	return nil
}

// fastBypass reports whether a bypass rule lets the request through by its
// path; ok is false when a rule's user agent matches, which the standard
// path verifies.
func fastBypass(rt *route, path string, ua []byte) (bypassed, ok bool) {
	fold := rt.loc.CaseInsensitive
	for _, b := range rt.loc.Bypass {
		if !matchPrefix(b.Prefixes, path, fold) {
			continue
		}
		for _, p := range b.Paths {
			if canon.HasPrefix(path, p, fold) {
				return true, true
			}
		}
		for _, u := range b.UserAgents {
			if u != "" && bytes.Contains(ua, unsafe.Slice(unsafe.StringData(u), len(u))) {
				return false, false
			}
		}
	}
	return false, true
}

// fastRooms checks the visitor's cookie of every waiting room of rt that
// applies to path, as gate.admit does for an admitted visitor; false as
// soon as one needs more than the cookie (or is a rate room).
func (h *Handler) fastRooms(ctx *fasthttp.RequestCtx, rt *route, path string, a *fastAdmission) bool {
	fold := rt.loc.CaseInsensitive
	for _, rr := range rt.rooms {
		if !matchPrefix(rr.prefixes, path, fold) {
			continue
		}
		if rr.rate != nil || a.n == maxFastRooms {
			return false
		}
		g := rr.gate
		box := g.box.Load()
		if box == nil {
			return false
		}
		c := ctx.Request.Header.Cookie(g.cookieName)
		v, err := box.open(unsafe.String(unsafe.SliceData(c), len(c)))
		if err != nil {
			return false
		}
		now := g.now().UnixNano()
		if v.Expires <= now || now >= v.Expires-int64(g.room.Settings.Session)/5 || g.wasReleased(v) {
			return false
		}
		a.adm[a.n] = admission{g, v}
		a.n++
	}
	return true
}

// peerAddr is the connection's peer address.
func peerAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	if ta, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		if a, ok := netip.AddrFromSlice(ta.IP); ok {
			return a.Unmap()
		}
	}
	return netip.Addr{}
}
