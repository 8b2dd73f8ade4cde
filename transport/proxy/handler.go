package proxy

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/transport/canon"
	"github.com/aditus-queue/aditus-queue/transport/crawler"
)

// ReleaseHeader, answered "1" by the upstream, frees the visitor's slot at
// once (after a checkout, say). The proxy strips it from the answer.
const ReleaseHeader = "Aditus-Queue-Release"

// flushInterval is how often each room's renewals go to the store, and
// the room's runtime settings come back (runtime.go): two messages a second
// per room per proxy node, so that a change reaches every node within a
// second.
const flushInterval = 500 * time.Millisecond

// Options are what a Handler needs besides its configuration.
type Options struct {
	Store  Store
	Now    func() time.Time
	Logger *slog.Logger
	// Transport carries requests to the upstreams (default:
	// UpstreamTransport).
	Transport http.RoundTripper
	// RateRooms and PublicURL (the queue's, where visitors wait) are
	// needed by blocks naming a rate room.
	RateRooms RateRooms
	PublicURL string
	// DNS verifies crawlers for user_agents bypass rules (default:
	// net.DefaultResolver).
	DNS crawler.Resolver
	// Forwarding chooses the path to the upstreams (default: ForwardFast;
	// Transport applies to ForwardStd and to protocol upgrades).
	Forwarding Forwarding
	// UpstreamTimeout bounds connecting, waiting for an answer and the
	// silence within a body (default: DefaultUpstreamTimeout).
	UpstreamTimeout time.Duration
	// UpstreamTLS verifies https upstreams (default: the system's roots).
	UpstreamTLS *tls.Config
	// Node names this proxy node in its reports to the rooms (the
	// console lists the nodes reporting each room).
	Node string
}

// UpstreamTransport is the default transport to upstreams: the standard
// one, keeping enough idle connections per upstream for a busy proxy (the
// standard two would open a connection for most requests under load).
func UpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 256
	return t
}

// Handler is the reverse proxy. Close stops its renewal batches.
type Handler struct {
	hosts map[string][]*route
	gates []*gate
	front *front
	store Store
	log   *slog.Logger
	stop  chan struct{}
	wg    sync.WaitGroup
	// fastSrv is the fast visitor server, once FastServer made it.
	fastSrv atomic.Pointer[fasthttp.Server]
}

// route is a location with its handlers.
type route struct {
	loc   *Location
	rooms []roomRoute
	next  http.Handler
	// fast forwards what the fast visitor server admits itself (nil: it
	// takes the standard path).
	fast fastForward
}

// fastForward forwards a request the fast visitor server admitted.
type fastForward interface {
	serveVisitor(ctx *fasthttp.RequestCtx, a *fastAdmission)
}

type roomRoute struct {
	prefixes []string
	gate     *gate
	rate     *rateGate
}

// admittedKey carries the visitors a request was admitted as, for the
// release header.
type admittedKey struct{}

type admission struct {
	gate    *gate
	visitor Visitor
}

// New builds the proxy for cfg. Waiting rooms of a host with the same name
// share one room (the first block's settings count).
func New(cfg *Config, o Options) (*Handler, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if o.Transport == nil {
		o.Transport = stdTransport(o.UpstreamTimeout, o.UpstreamTLS)
	}
	if o.DNS == nil {
		o.DNS = net.DefaultResolver
	}
	fr, err := newFront(cfg.Server, o)
	if err != nil {
		return nil, err
	}
	h := &Handler{hosts: map[string][]*route{}, front: fr, store: o.Store, log: o.Logger, stop: make(chan struct{})}
	gates := map[string]*gate{}
	for name, host := range cfg.Hosts {
		for _, loc := range host.Locations {
			rt, err := h.route(loc, cfg, fr, o, gates)
			if err != nil {
				return nil, err
			}
			h.hosts[name] = append(h.hosts[name], rt)
		}
	}
	h.wg.Add(1)
	go h.flushLoop()
	return h, nil
}

// route builds one location's route: its rooms in order (a capacity room's
// gate is shared by every location that names it, through gates), then
// the upstream or the directory it serves.
func (h *Handler) route(loc *Location, cfg *Config, fr *front, o Options, gates map[string]*gate) (*route, error) {
	rt := &route{loc: loc}
	for _, rr := range loc.Rooms {
		if rr.Room.RateRoom != "" {
			rg, err := newRateGate(rr.Room, o.RateRooms, o.PublicURL, cfg.Server.TrustedProxies, o.Logger)
			if err != nil {
				return nil, err
			}
			rt.rooms = append(rt.rooms, roomRoute{prefixes: rr.Prefixes, rate: rg})
			continue
		}
		key := rr.Room.Host + "\x00" + rr.Room.Name
		g, ok := gates[key]
		if !ok {
			var err error
			if g, err = newGate(rr.Room, o.Store, o.Now, o.Logger); err != nil {
				return nil, err
			}
			g.secure = fr.cookieSecure
			g.node = o.Node
			if !cfg.Modified.IsZero() {
				g.fileAt = cfg.Modified.UnixNano()
			}
			g.budget.addrs = fr.addrs
			g.waiting.addrs = fr.addrs
			gates[key] = g
			h.gates = append(h.gates, g)
		}
		rt.rooms = append(rt.rooms, roomRoute{prefixes: rr.Prefixes, gate: g})
	}
	if loc.Upstream != nil {
		rt.next, rt.fast = h.forwarder(loc.Upstream, fr, o)
	} else {
		rt.next = http.StripPrefix(strings.TrimSuffix(loc.Path, "/"), http.FileServer(http.Dir(loc.Directory)))
	}
	return rt, nil
}

// Close stops the renewal batches after sending the last one, and closes
// the fast path's idle upstream connections (those in use are closed when
// their answer ends).
func (h *Handler) Close() {
	close(h.stop)
	h.wg.Wait()
	h.closePools()
}

func (h *Handler) flushLoop() {
	defer h.wg.Done()
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for ticks := 0; ; ticks++ {
		select {
		case <-h.stop:
			for _, g := range h.gates {
				g.flush(context.Background())
			}
			return
		case <-t.C:
			for _, g := range h.gates {
				g.flush(context.Background())
			}
			h.announce(ticks)
		}
	}
}

// ServeHTTP makes the request's path canonical (a path without a
// canonical form is answered 400), chooses the host by the Host header and
// the location by the longest prefix of that path, lets bypassed requests
// through untouched, runs the waiting rooms that apply in order, then
// serves the location: every decision is taken on the path forwarded.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	closeIfUnsure(w, r)
	c, err := canon.Of(r)
	if err != nil {
		http.Error(w, "Bad request: this address has no canonical form ("+
			strings.TrimPrefix(err.Error(), canon.ErrRefused.Error()+": ")+").", http.StatusBadRequest)
		return
	}
	r = withPath(r, c)
	host, ok := hostName(r.Host)
	if !ok {
		http.Error(w, "Bad request: the Host header's port is not a number.", http.StatusBadRequest)
		return
	}
	routes := h.hosts[strings.ToLower(host)]
	path := c.Match
	var rt *route
	for _, cand := range routes {
		if canon.HasPrefix(path, cand.loc.Path, cand.loc.CaseInsensitive) {
			rt = cand
			break
		}
	}
	if rt == nil {
		http.Error(w, "Not found: no site is configured here for this address.", http.StatusNotFound)
		return
	}
	h.front.scrub(r)
	fold := rt.loc.CaseInsensitive
	if h.front.bypassed(r, rt.loc.Bypass, path, fold) {
		rt.next.ServeHTTP(w, r)
		return
	}
	var admitted []admission
	for _, rr := range rt.rooms {
		if !matchPrefix(rr.prefixes, path, fold) {
			continue
		}
		if rr.rate != nil {
			var pass bool
			if r, pass = rr.rate.admit(w, r); !pass {
				return
			}
			continue
		}
		v, ok, pass := rr.gate.admit(w, r)
		if !pass {
			return
		}
		if ok {
			admitted = append(admitted, admission{rr.gate, v})
		}
	}
	if len(admitted) > 0 {
		r = r.WithContext(context.WithValue(r.Context(), admittedKey{}, admitted))
	}
	rt.next.ServeHTTP(w, r)
}

// modifyResponse strips the release header and, when it says 1, frees the
// visitor's slots at once.
func (h *Handler) modifyResponse(resp *http.Response) error {
	v := resp.Header.Get(ReleaseHeader)
	if v == "" {
		return nil
	}
	resp.Header.Del(ReleaseHeader)
	if strings.TrimSpace(v) != "1" {
		return nil
	}
	adm, _ := resp.Request.Context().Value(admittedKey{}).([]admission)
	for _, a := range adm {
		c := a.gate.release(context.WithoutCancel(resp.Request.Context()), resp.Request, a.visitor)
		resp.Header.Add("Set-Cookie", c.String())
	}
	return nil
}

// withPath is r with its path replaced by the canonical one, which both
// forwarding paths send, and without the headers by which some servers
// let a request name another path than its own (IIS's X-Original-URL,
// Symfony's X-Rewrite-URL): no decision here could have seen it.
func withPath(r *http.Request, c canon.Request) *http.Request {
	r2 := c.On(r)
	for _, k := range pathOverrides {
		r2.Header.Del(k)
	}
	return r2
}

// pathOverrides are request headers that upstream frameworks read as the
// request's path.
var pathOverrides = []string{"X-Original-Url", "X-Rewrite-Url", "X-Original-Uri"}

// matchPrefix reports whether the canonical match path starts with one of
// prefixes (or prefixes is empty), ignoring case when fold is set.
func matchPrefix(prefixes []string, path string, fold bool) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if canon.HasPrefix(path, p, fold) {
			return true
		}
	}
	return false
}

// hostName is the name of a Host header without its port. A port that is
// not a number (RFC 3986: port = *DIGIT) is refused: the upstream is sent
// the Host as it came, so it must be one the routes were chosen for.
func hostName(h string) (string, bool) {
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		return h, true
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return name, true
}
