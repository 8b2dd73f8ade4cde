package proxy

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"

	"github.com/aditus-queue/aditus-queue/transport/canon"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/crawler"
)

// front is what the proxy believes of the network in front of it: which
// peers may speak for the client (trusted proxies), whether the visitor
// came over TLS, and which crawlers are who they say.
type front struct {
	addrs    *clientaddr.Resolver
	cookie   CookieSecure
	crawlers *crawler.Verifier
}

// newFront is the front of server block s; o.DNS and o.Now must be set.
func newFront(s Server, o Options) (*front, error) {
	c := crawler.Defaults(o.DNS)
	c.Now = o.Now
	v, err := crawler.NewVerifier(c)
	if err != nil {
		return nil, err
	}
	return &front{addrs: clientaddr.NewResolver(s.TrustedProxies), cookie: s.CookieSecure, crawlers: v}, nil
}

// scrub removes the forwarding headers of a request from a peer that is
// not a trusted proxy: nothing behind this point (a rate room's gate, the
// upstream) can then be told a client's own claim about its address or
// scheme.
func (f *front) scrub(r *http.Request) {
	if f.addrs.Trusts(clientaddr.Peer(r)) {
		return
	}
	for _, h := range clientaddr.ForwardingHeaders {
		r.Header.Del(h)
	}
}

// cookieSecure reports whether the visitor cookie of r is marked Secure.
func (f *front) cookieSecure(r *http.Request) bool {
	switch f.cookie {
	case CookieSecureAlways:
		return true
	case CookieSecureNever:
		return false
	default:
		return f.addrs.Secure(r)
	}
}

// rewrite sends pr to upstream. The upstream is told the client chain: the
// X-Forwarded-For a trusted proxy sent, with the peer appended, and
// X-Forwarded-Proto https when the visitor came over TLS to us or to a
// trusted proxy. An untrusted peer's own claims never reach it (ReverseProxy
// drops the inbound forwarding headers before Rewrite).
func (f *front) rewrite(pr *httputil.ProxyRequest, upstream *url.URL) {
	pr.SetURL(upstream)
	if f.addrs.Trusts(clientaddr.Peer(pr.In)) {
		if xff := pr.In.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			pr.Out.Header["X-Forwarded-For"] = slices.Clone(xff)
		}
	}
	pr.SetXForwarded()
	if f.addrs.Secure(pr.In) {
		pr.Out.Header.Set("X-Forwarded-Proto", "https")
	}
	pr.Out.Host = pr.In.Host
}

// bypassed reports whether r passes untouched: its canonical match path
// (ignoring case when fold is set) starts with one of
// a matching rule's paths, or its User-Agent contains one of the rule's
// user_agents and the client's address is verified as that crawler's
// (unless the rule says unverified = true).
func (f *front) bypassed(r *http.Request, list []Bypass, path string, fold bool) bool {
	ua := r.UserAgent()
	for _, b := range list {
		if !matchPrefix(b.Prefixes, path, fold) {
			continue
		}
		for _, p := range b.Paths {
			if canon.HasPrefix(path, p, fold) {
				return true
			}
		}
		for i, a := range b.UserAgents {
			if a == "" || !strings.Contains(ua, a) {
				continue
			}
			if b.Unverified {
				return true
			}
			if f.crawlers.Verify(r.Context(), b.Crawlers[i], f.addrs.Client(r)) {
				return true
			}
		}
	}
	return false
}
