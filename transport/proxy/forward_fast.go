package proxy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// maxUpstreamConns bounds the connections one location keeps to its
// upstream; a request finding none free within the timeout is answered
// 502.
const maxUpstreamConns = 1024

// maxAnswerHeader bounds the upstream answer's header block (nginx's
// default is 4 or 8 KB, Go's standard transport's 10 MB); a larger one is
// answered 502. It is the read buffer of each request in flight.
const maxAnswerHeader = 64 << 10

// maxIdle is how long an upstream connection may wait unused in the pool.
// Nothing reads it meanwhile, so an upstream's close goes unnoticed until
// the next request: it must be below the keep-alive timeouts of common
// upstream servers (gunicorn 2 s, Node and Apache 5 s), or requests with a
// body would meet closed connections (sent once, they are not sent again).
const maxIdle = time.Second

// fastForwarder sends a location's requests to its upstream with
// fasthttp's client: pooled keep-alive connections, request headers
// copied into pooled buffers, both bodies streamed. Protocol upgrades go
// the standard way (upgrade), which can hand the connection over.
type fastForwarder struct {
	h        *Handler
	upstream *url.URL
	front    *front
	client   *fasthttp.HostClient
	upgrade  http.Handler
	// pool carries the fast visitor server's requests to a plain-HTTP
	// upstream (nil for https: they go by client).
	pool *connPool
	// joins: the upstream URL has a path or query that each request's
	// is joined to, as httputil.ProxyRequest.SetURL does.
	joins bool
}

func newFastForwarder(h *Handler, upstream *url.URL, fr *front, o Options, upgrade http.Handler) *fastForwarder {
	timeout := o.UpstreamTimeout
	tls := upstream.Scheme == "https"
	addr := upstream.Host
	if upstream.Port() == "" {
		port := "80"
		if tls {
			port = "443"
		}
		addr = net.JoinHostPort(upstream.Hostname(), port)
	}
	c := &fasthttp.HostClient{
		Addr:                      addr,
		IsTLS:                     tls,
		TLSConfig:                 o.UpstreamTLS,
		Dial:                      deadlineDialer(timeout),
		MaxConns:                  maxUpstreamConns,
		MaxConnWaitTimeout:        timeout,
		MaxIdleConnDuration:       maxIdle,
		ReadBufferSize:            maxAnswerHeader,
		NoDefaultUserAgentHeader:  true,
		DisablePathNormalizing:    true,
		StreamResponseBody:        true,
		MaxIdemponentCallAttempts: 2,
		RetryIfErr:                retryStale,
	}
	f := &fastForwarder{h: h, upstream: upstream, front: fr, client: c, upgrade: upgrade,
		joins: upstream.Path != "" && upstream.Path != "/" || upstream.RawQuery != ""}
	if !tls {
		f.pool = newConnPool(addr, timeout)
	}
	return f
}

// retryStale retries a request without a body once on a fresh connection
// when a pooled one failed (the upstream closed it while idle), but never
// after a timeout: the upstream may be working on it.
func retryStale(req *fasthttp.Request, attempts int, err error) (bool, bool) {
	if isTimeout(err) || errors.Is(err, fasthttp.ErrNoFreeConns) {
		return false, false
	}
	return false, req.Header.IsGet() || req.Header.IsHead() || req.Header.IsOptions()
}

func (f *fastForwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) {
		f.upgrade.ServeHTTP(w, r)
		return
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer func() {
		_ = resp.CloseBodyStream()
		fasthttp.ReleaseResponse(resp)
		fasthttp.ReleaseRequest(req)
	}()
	f.request(req, r)
	resp.Header.SetNoDefaultContentType(true)
	if r.Method == http.MethodHead {
		resp.SkipBody = true
	}
	if err := f.client.Do(req, resp); err != nil {
		f.h.upstreamFailed(w, r, f.upstream, err)
		return
	}
	f.answer(w, r, resp)
}

// request fills req from r: method, target, the visitor's Host, the
// end-to-end headers, the forwarding headers, and the body as a stream
// (chunked upstream when its length is unknown). Expect is not forwarded:
// the server in front already answered 100 Continue when the body was
// first read.
func (f *fastForwarder) request(req *fasthttp.Request, r *http.Request) {
	req.Header.DisableNormalizing()
	req.Header.SetNoDefaultContentType(true)
	req.Header.SetMethod(r.Method)
	req.SetRequestURI(f.target(r))
	if f.client.IsTLS {
		req.URI().SetScheme("https")
	}
	req.Header.SetHost(r.Host)
	req.UseHostHeader = true
	var named []string
	if c := r.Header["Connection"]; len(c) > 0 {
		named = connectionTokens(c)
	}
	for k, vv := range r.Header {
		if dropRequestHeader(k) || isHop(k, named) {
			continue
		}
		for _, v := range vv {
			req.Header.Add(k, v)
		}
	}
	if te := r.Header["Te"]; len(te) == 1 && te[0] == "trailers" {
		req.Header.Set("Te", "trailers")
	}
	f.forwarded(req, r)
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		req.SetBodyStream(r.Body, int(r.ContentLength))
	}
}

// dropRequestHeader: headers the proxy sets itself or must not pass on.
func dropRequestHeader(k string) bool {
	switch k {
	case "Content-Length", "Expect", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded":
		return true
	}
	return false
}

// forwarded sets the forwarding headers as the standard path's rewrite
// does: X-Forwarded-For is a trusted proxy's chain with the peer appended
// (the peer alone otherwise), X-Forwarded-Host the visitor's Host, and
// X-Forwarded-Proto https when the visitor came over TLS to us or to a
// trusted proxy.
func (f *fastForwarder) forwarded(req *fasthttp.Request, r *http.Request) {
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		prior := r.Header["X-Forwarded-For"]
		if len(prior) > 0 && f.front.addrs.Trusts(clientaddr.Peer(r)) {
			ip = strings.Join(prior, ", ") + ", " + ip
		}
		req.Header.Set("X-Forwarded-For", ip)
	}
	req.Header.Set("X-Forwarded-Host", r.Host)
	if r.TLS != nil || f.front.addrs.Secure(r) {
		req.Header.Set("X-Forwarded-Proto", "https")
	} else {
		req.Header.Set("X-Forwarded-Proto", "http")
	}
}

// target is the request-target sent upstream: the canonical path the
// handler decided on (r.URL's, with the visitor's query byte for byte),
// joined to the upstream URL's path and query when it has them.
func (f *fastForwarder) target(r *http.Request) string {
	if !f.joins {
		return r.URL.RequestURI()
	}
	u := *r.URL
	u.Scheme, u.Host, u.User = "", "", nil
	u.Path, u.RawPath = joinURLPath(f.upstream, r.URL)
	if f.upstream.RawQuery == "" || u.RawQuery == "" {
		u.RawQuery = f.upstream.RawQuery + u.RawQuery
	} else {
		u.RawQuery = f.upstream.RawQuery + "&" + u.RawQuery
	}
	return u.RequestURI()
}

// joinURLPath joins base's path and the request's, with one slash
// between them, keeping the request's escaping.
func joinURLPath(base, req *url.URL) (path, rawpath string) {
	if base.RawPath == "" && req.RawPath == "" {
		return joinSlash(base.Path, req.Path), ""
	}
	return joinSlash(base.Path, req.Path), joinSlash(base.EscapedPath(), req.EscapedPath())
}

func joinSlash(a, b string) string {
	as, bs := strings.HasSuffix(a, "/"), strings.HasPrefix(b, "/")
	switch {
	case as && bs:
		return a + b[1:]
	case !as && !bs:
		return a + "/" + b
	}
	return a + b
}

// answer copies the upstream's answer to w: the end-to-end headers, the
// release header's effect, the status, and the body as it comes.
func (f *fastForwarder) answer(w http.ResponseWriter, r *http.Request, resp *fasthttp.Response) {
	hdr := w.Header()
	var named []string
	if c := resp.Header.Peek("Connection"); len(c) > 0 {
		named = connectionTokens([]string{string(c)})
	}
	copyHeader(hdr, &resp.Header, named)
	if _, ok := hdr[ReleaseHeader]; ok {
		_ = f.h.modifyResponse(&http.Response{Header: hdr, Request: r})
	}
	status := resp.StatusCode()
	w.WriteHeader(status)
	if r.Method == http.MethodHead || status == http.StatusNoContent || status == http.StatusNotModified {
		return
	}
	body := resp.BodyStream()
	if body == nil {
		return
	}
	// A body of unknown length (chunked, or until close) or an event
	// stream reaches the visitor as it comes.
	flush := resp.Header.ContentLength() < 0 || strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream")
	if err := copyBody(w, body, flush); err != nil {
		f.h.log.Warn("upstream body cut", "upstream", f.upstream.Host, "error", err)
		// The status is sent: end the connection so that the visitor
		// sees a cut body rather than a short one.
		panic(http.ErrAbortHandler)
	}
}

// copyHeader adds the end-to-end headers of h to hdr with two
// allocations in all: one string holding every value, one slice of them.
func copyHeader(hdr http.Header, h *fasthttp.ResponseHeader, named []string) {
	n, size := 0, 0
	for _, v := range h.All() {
		n, size = n+1, size+len(v)
	}
	var sb strings.Builder
	sb.Grow(size)
	for _, v := range h.All() {
		sb.Write(v)
	}
	all, vals := sb.String(), make([]string, n)
	i, off := 0, 0
	for k, v := range h.All() {
		vals[i] = all[off : off+len(v)]
		off += len(v)
		if key := headerKey(k); !isHop(key, named) {
			if prev := hdr[key]; prev != nil {
				hdr[key] = append(prev, vals[i])
			} else {
				hdr[key] = vals[i : i+1 : i+1]
			}
		}
		i++
	}
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody streams body to w through a pooled buffer, flushing each piece
// when flush is set. Its error is the upstream's (a visitor who left ends
// the copy quietly).
func copyBody(w http.ResponseWriter, body io.Reader, flush bool) error {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	fl, _ := w.(http.Flusher)
	for {
		n, err := body.Read(*bp)
		if n > 0 {
			if _, werr := w.Write((*bp)[:n]); werr != nil {
				return nil
			}
			if flush && fl != nil {
				fl.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// commonHeaders are the response header names most answers carry, so that
// copying them takes no allocation for the name.
var commonHeaders = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"Accept-Ranges", "Access-Control-Allow-Origin", "Age", "Cache-Control", "Content-Disposition",
		"Content-Encoding", "Content-Language", "Content-Length", "Content-Security-Policy", "Content-Type",
		"Date", "Etag", "Expires", "Last-Modified", "Link", "Location", "Pragma", "Referrer-Policy",
		"Server", "Set-Cookie", "Strict-Transport-Security", "Vary", "X-Content-Type-Options",
		"X-Frame-Options", ReleaseHeader,
	} {
		m[k] = k
	}
	return m
}()

func headerKey(k []byte) string {
	if s, ok := commonHeaders[string(k)]; ok {
		return s
	}
	return http.CanonicalHeaderKey(string(k))
}

// deadlineDialer dials upstreams within timeout, and bounds each read and
// write on the connection by it: a silent upstream is cut after timeout
// (at most an eighth later), a slow but moving stream is not.
func deadlineDialer(timeout time.Duration) fasthttp.DialFunc {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return func(addr string) (net.Conn, error) {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		return &deadlineConn{Conn: c, timeout: timeout}, nil
	}
}

// deadlineConn gives every read and write at least timeout: the
// deadline it arms is timeout and an eighth ahead, and it is armed again
// only when less than timeout remains. Arming a deadline updates a
// runtime timer (about a third of a microsecond); per read and write
// that was a few of them for every request forwarded, now one per
// eighth of the timeout.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
	// until is the deadline armed, on the monotonic clock since
	// monoStart (0: none), so that a step of the wall clock neither
	// keeps a passed deadline nor arms one needlessly; atomic, as a
	// net.Conn may be read and written at once.
	until atomic.Int64
}

var monoStart = time.Now()

// arm makes sure the deadline is at least timeout away.
func (c *deadlineConn) arm() error {
	now := time.Now()
	mono := int64(now.Sub(monoStart))
	if c.until.Load()-mono >= int64(c.timeout) {
		return nil
	}
	c.until.Store(mono + int64(c.timeout+c.timeout/8))
	return c.Conn.SetDeadline(now.Add(c.timeout + c.timeout/8))
}

// SetDeadline, SetReadDeadline and SetWriteDeadline (a TLS handshake
// sets one, then clears it) pass through and make the next read or write
// arm the deadline again.
func (c *deadlineConn) SetDeadline(t time.Time) error { return c.set(c.Conn.SetDeadline, t) }

func (c *deadlineConn) SetReadDeadline(t time.Time) error { return c.set(c.Conn.SetReadDeadline, t) }

func (c *deadlineConn) SetWriteDeadline(t time.Time) error { return c.set(c.Conn.SetWriteDeadline, t) }

func (c *deadlineConn) set(set func(time.Time) error, t time.Time) error {
	c.until.Store(0)
	return set(t)
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	if err := c.arm(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	if err := c.arm(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
