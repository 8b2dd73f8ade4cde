// Package gate is net/http middleware that lets a request reach the shop
// only with a valid admission token of one waiting room, verified offline.
//
// It does what every edge gate in deploy/edge does, in three steps:
//
//  1. A request carrying a valid token in the aditus_queue_token query
//     parameter (the visitor returns from the waiting room) gets the token
//     as the cookie aditus_queue (Secure; HttpOnly; SameSite=Lax; Max-Age the
//     token's remaining lifetime) and a 302 to the same URL without the
//     parameter, so the token does not stay in the address bar or logs.
//  2. A request whose cookie holds a valid token goes on to the next
//     handler, which finds the token's claims with ClaimsFrom.
//  3. Every other request gets a 302 to the room's gateway link,
//     <room>/enter?return=<the page asked for>: the room admits the visitor
//     at once while nobody waits (and sends it back to that page with a
//     token), or lets it wait.
//
// Before any of this the request's path is made canonical
// (transport/canon): a path with no canonical form (an encoded `/`, `..`
// above the root, a double encoding …) is answered 400, and the next
// handler and the return URL see the canonical path, so that the shop
// behind serves the page the gate decided on.
//
// Forwarding headers (X-Forwarded-For, -Proto, -Host, Forwarded) are
// believed only from the peers named by WithTrustedProxies, and removed
// from the requests of every other peer before the next handler sees them.
//
// A token is valid when it is an HS256 JWT (the algorithm is pinned: none,
// RS256 and every other are refused) signed with the room's secret, with iss
// "aditus-queue", aud the room's slug and exp in the future. The gate never
// calls the queue.
package gate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/transport/canon"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/returnurl"
)

// DefaultCookie is the name of the cookie that keeps the token.
const DefaultCookie = "aditus_queue"

// Gate checks requests for one room. It is safe for concurrent use.
type Gate struct {
	slug   string
	secret []byte
	enter  string // the room's gateway link, <room>/enter
	cookie string
	origin string // the shop's public origin; empty: from the request
	now    func() time.Time
	// addrs says which peers may speak for the client (none by default).
	addrs *clientaddr.Resolver
}

// Option changes a Gate's defaults.
type Option func(*Gate)

// WithCookie names the cookie that keeps the token (default aditus_queue).
func WithCookie(name string) Option { return func(g *Gate) { g.cookie = name } }

// WithClock sets the clock tokens are checked against (default time.Now).
func WithClock(now func() time.Time) Option { return func(g *Gate) { g.now = now } }

// WithOrigin sets the shop's public origin ("https://shop.example.com"),
// used to build the return URL handed to the room. Without it the origin is
// read from the request: https when it came over TLS or with
// X-Forwarded-Proto https from a trusted proxy, and the trusted proxy's
// X-Forwarded-Host or else the request's Host. Set it when the gate sits
// behind a proxy that rewrites Host.
func WithOrigin(origin string) Option {
	return func(g *Gate) { g.origin = strings.TrimSuffix(origin, "/") }
}

// WithTrustedProxies names the load balancers in front of the gate
// (clientaddr.ParsePrefixes reads them): only their X-Forwarded-Proto and
// X-Forwarded-Host are believed, and the forwarding headers of every other
// peer are removed. Without it no peer is trusted.
func WithTrustedProxies(prefixes []netip.Prefix) Option {
	return func(g *Gate) { g.addrs = clientaddr.NewResolver(prefixes) }
}

// New returns a gate for the room slug, whose tokens are signed with
// secret (the room's secret string as bytes), and whose waiting room is at
// room ("https://queue.example.com/queue/spring-sale"). It fails when slug
// is empty, secret shorter than token.MinSecretLen, room is not an absolute
// http(s) URL without query, or an option is invalid.
func New(slug string, secret []byte, room string, opts ...Option) (*Gate, error) {
	g := &Gate{slug: slug, secret: secret, cookie: DefaultCookie, now: time.Now, addrs: clientaddr.NewResolver(nil)}
	for _, o := range opts {
		o(g)
	}
	if slug == "" {
		return nil, errors.New("gate: empty slug")
	}
	if len(secret) < token.MinSecretLen {
		return nil, fmt.Errorf("gate: secret empty or shorter than %d bytes", token.MinSecretLen)
	}
	u, err := url.Parse(room)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("gate: waiting-room URL %q is not an absolute http(s) URL without query", room)
	}
	g.enter = strings.TrimSuffix(room, "/") + "/enter"
	if g.cookie == "" || strings.ContainsAny(g.cookie, "=;, \t\r\n") {
		return nil, fmt.Errorf("gate: invalid cookie name %q", g.cookie)
	}
	if g.origin != "" {
		o, err := url.Parse(g.origin)
		if err != nil || (o.Scheme != "https" && o.Scheme != "http") || o.Host == "" || (o.Path != "" && o.Path != "/") || o.RawQuery != "" {
			return nil, fmt.Errorf("gate: origin %q is not scheme://host[:port]", g.origin)
		}
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

// Wrap returns a handler that lets through to next only requests with a
// valid token, as the package documentation describes.
func (g *Gate) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := canon.Of(r)
		if err != nil {
			http.Error(w, "Bad request: this address has no canonical form.", http.StatusBadRequest)
			return
		}
		r = g.prepare(r, c)
		now := g.now()
		if raw := r.URL.Query().Get(returnurl.TokenParam); raw != "" {
			if c, err := token.Verify(g.secret, g.slug, raw, now); err == nil {
				g.admit(w, r, raw, c, now)
				return
			}
		}
		if ck, err := r.Cookie(g.cookie); err == nil && ck.Value != "" {
			if c, err := token.Verify(g.secret, g.slug, ck.Value, now); err == nil {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, c)))
				return
			}
		}
		redirect(w, g.RoomURL(r))
	})
}

// prepare is r with its canonical path, and without forwarding headers
// unless its peer is a trusted proxy.
func (g *Gate) prepare(r *http.Request, c canon.Request) *http.Request {
	r2 := c.On(r)
	if g.addrs.Trusts(clientaddr.Peer(r)) {
		return r2
	}
	cloned := false // the caller's request stays as it was
	for _, h := range clientaddr.ForwardingHeaders {
		if _, ok := r2.Header[h]; !ok {
			continue
		}
		if !cloned {
			r2.Header, cloned = r.Header.Clone(), true
		}
		delete(r2.Header, h)
	}
	return r2
}

// Admitted reports the claims of the valid token r carries in its cookie,
// or false.
func (g *Gate) Admitted(r *http.Request) (*token.Claims, bool) {
	ck, err := r.Cookie(g.cookie)
	if err != nil {
		return nil, false
	}
	c, err := token.Verify(g.secret, g.slug, ck.Value, g.now())
	return c, err == nil
}

// RoomURL is where a request without a valid token is sent: the room's
// gateway link with the page r asked for (without any token parameter) as
// its return URL.
func (g *Gate) RoomURL(r *http.Request) string {
	u := *r.URL
	returnurl.StripToken(&u)
	origin := g.origin
	if origin == "" {
		scheme := "http"
		if g.addrs.Secure(r) {
			scheme = "https"
		}
		origin = scheme + "://" + g.host(r)
	}
	return g.enter + "?return=" + url.QueryEscape(origin+u.RequestURI())
}

// host is the Host the visitor asked for: a trusted proxy's
// X-Forwarded-Host (the value the nearest one wrote), or r's own.
func (g *Gate) host(r *http.Request) string {
	if !g.addrs.Trusts(clientaddr.Peer(r)) {
		return r.Host
	}
	vals := r.Header.Values("X-Forwarded-Host")
	if len(vals) == 0 {
		return r.Host
	}
	last := vals[len(vals)-1]
	if j := strings.LastIndexByte(last, ','); j >= 0 {
		last = last[j+1:]
	}
	if h := strings.TrimSpace(last); h != "" {
		return h
	}
	return r.Host
}

// admit keeps raw in the cookie for the token's remaining lifetime and
// sends the visitor to the same URL without the token parameter.
func (g *Gate) admit(w http.ResponseWriter, r *http.Request, raw string, c *token.Claims, now time.Time) {
	left := int(c.ExpiresAt.Sub(now) / time.Second)
	if left < 1 {
		left = 1
	}
	http.SetCookie(w, &http.Cookie{
		Name:     g.cookie,
		Value:    raw,
		Path:     "/",
		MaxAge:   left,
		Secure:   true,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	})
	u := *r.URL
	returnurl.StripToken(&u)
	redirect(w, u.RequestURI())
}

func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusFound)
}

type claimsKey struct{}

// ClaimsFrom returns the claims of the token a request was let through
// with, in a handler behind Wrap.
func ClaimsFrom(ctx context.Context) (*token.Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*token.Claims)
	return c, ok
}
