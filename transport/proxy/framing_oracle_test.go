package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// The differential oracle of request framing: a real proxy in front of a
// room that is full (so /checkout waits) and of an upstream that records
// the raw bytes of each connection and reads them with a strict parser of
// its own. What the upstream saw must be exactly what the gate decided to
// forward: same method, path and body length, and nothing more.

// visitorServer is a server the proxy can face visitors with: start serves
// h on a port of 127.0.0.1 and returns its address and a stop that returns
// once every request it began is finished.
type visitorServer struct {
	name  string
	start func(h *Handler) (addr string, stop func())
}

// visitorServers are every server the proxy can serve visitors on: the
// table and the fuzz target run against each.
var visitorServers = []visitorServer{{"fasthttp", startFast}, {"net/http", startNetHTTP}}

// startFast is the proxy's fasthttp server, as the proxy listener sets it
// up.
func startFast(h *Handler) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := h.FastServer()
	done := make(chan struct{})
	go func() { _ = s.Serve(FastListener(ln)); close(done) }()
	return ln.Addr().String(), func() { _ = s.Shutdown(); <-done }
}

// startNetHTTP is net/http's server as the proxy listener sets it up
// (proxyServer in the main package: the default header limits).
func startNetHTTP(h *Handler) (string, func()) {
	s := httptest.NewUnstartedServer(h)
	s.Config.ReadHeaderTimeout = 10 * time.Second
	s.Config.IdleTimeout = 10 * time.Second
	s.Start()
	return s.Listener.Addr().String(), s.Close
}

// upstreamClients are both paths from the proxy to its upstreams.
var upstreamClients = []struct {
	name string
	fw   Forwarding
}{{"std", ForwardStd}, {"fast", ForwardFast}}

// sentinel closes a row whose connection stays open: answered and
// forwarded like any request, it ends the exchange.
const sentinel = "GET /sentinel HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n"

// framingRig is one proxy between one visitor server and one recording
// upstream, for one exchange.
type framingRig struct {
	h    *Handler
	up   *rawUpstream
	addr string
	stop func()
	// transport is the standard client's (the fast client uses it for
	// protocol upgrades).
	transport *http.Transport

	mu      sync.Mutex
	decided []decision
	// fast counts the requests the fast visitor server forwarded itself.
	fast int
}

// decision is a request the gate handed to forwarding, as the gate saw it.
type decision struct {
	key string // "METHOD path[?query]"
	// body is the length read from the visitor, or -1 when the body was
	// cut (a visitor's framing error or a visitor gone).
	body int64
	// left: the visitor was gone before the forwarding ended, so the
	// upstream may have seen part of it or nothing.
	left bool
}

func (d decision) String() string { return fmt.Sprintf("%s %d", d.key, d.body) }

const framingConfig = `host "shop.test" {
  location "/" {
    upstream "%[1]s" {}
  }
  location "/checkout" {
    upstream "%[1]s" {}
    waiting_room {
      active         = 1
      on_store_error = "wait"
    }
  }
}`

// newFramingRig builds the proxy on client fw behind server vs, its room
// full.
func newFramingRig(t testing.TB, vs visitorServer, fw Forwarding) *framingRig {
	t.Helper()
	up := newRawUpstream(t)
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf(framingConfig, up.ln.Addr().String())))
	if err != nil {
		t.Fatal(err)
	}
	store := &tableStore{tables: map[string]*capacity.Table{}}
	tr := stdTransport(10*time.Second, nil)
	h, err := New(cfg, Options{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Forwarding: fw, UpstreamTimeout: 10 * time.Second, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	g := h.gates[0]
	if _, err := store.Check(context.Background(), g.id, g.room.Settings, "someone-inside"); err != nil {
		t.Fatal(err)
	}
	rig := &framingRig{h: h, up: up, transport: tr}
	for _, routes := range h.hosts {
		for _, rt := range routes {
			rt.next = rig.record(rt.next)
			if rt.fast != nil {
				rt.fast = fastRecord{rig, rt.fast}
			}
		}
	}
	rig.addr, rig.stop = vs.start(h)
	return rig
}

// record wraps a location's forwarding: every request reaching it is one
// the gate decided to forward.
func (rig *framingRig) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := &countingBody{ReadCloser: r.Body}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = body
		}
		next.ServeHTTP(w, r)
		n, eof, err := body.state()
		d := decision{key: r.Method + " " + pathQuery(r.URL.Path, r.URL.RawQuery), body: n,
			left: r.Context().Err() != nil}
		if err != nil || r.ContentLength > 0 && n != r.ContentLength || r.ContentLength < 0 && !eof {
			d.body = -1
		}
		rig.mu.Lock()
		rig.decided = append(rig.decided, d)
		rig.mu.Unlock()
	})
}

// fastRecord wraps the fast visitor server's forwarding as record does
// the standard one's (its requests have no body).
type fastRecord struct {
	rig  *framingRig
	next fastForward
}

func (f fastRecord) serveVisitor(ctx *fasthttp.RequestCtx, a *fastAdmission) {
	f.next.serveVisitor(ctx, a)
	d := decision{key: string(ctx.Method()) + " " + string(ctx.Request.Header.RequestURI())}
	f.rig.mu.Lock()
	f.rig.decided = append(f.rig.decided, d)
	f.rig.fast++
	f.rig.mu.Unlock()
}

func pathQuery(path, query string) string {
	if query != "" {
		return path + "?" + query
	}
	return path
}

// countingBody counts what the forwarding read of a body; the standard
// client may still be reading it (its end) after the handler returned.
type countingBody struct {
	io.ReadCloser
	mu  sync.Mutex
	n   int64
	eof bool
	err error
}

// state is what was read so far.
func (b *countingBody) state() (n int64, eof bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n, b.eof, b.err
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		b.err = err
	}
	return n, err
}

// send writes req on a new connection and reads n answers (1xx left
// out), then sends the sentinel and reads until the proxy closes the
// connection: a proxy that kept it open answers the sentinel too. With n
// < 0 the visitor's side ends after req (the fuzz target's inputs may be
// incomplete) and answers are read until the close.
func (rig *framingRig) send(t testing.TB, req []byte, n int) (statuses []int, err error) {
	t.Helper()
	c, err := net.Dial("tcp", rig.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	if n < 0 {
		c.(*net.TCPConn).CloseWrite()
	}
	br := bufio.NewReader(c)
	for {
		if n >= 0 && len(statuses) == n {
			n = -1
			c.Write([]byte(sentinel))
		}
		if _, err := br.Peek(1); err == io.EOF || isReset(err) {
			return statuses, nil
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return statuses, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode >= 200 {
			statuses = append(statuses, res.StatusCode)
		}
		if err != nil {
			return statuses, err
		}
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// finish waits until every request of the visitor server is done and
// every upstream connection ended, then closes the rig.
func (rig *framingRig) finish(t testing.TB) {
	t.Helper()
	rig.stop()
	rig.up.wait(t, rig.transport.CloseIdleConnections)
	rig.h.Close()
}

// check is the oracle: every request the upstream saw is one the gate
// decided on (same method, path and body length; cut only if the
// visitor's body failed or the visitor left), and every decision reached
// the upstream whole unless its body failed or its visitor left first
// (then it may have reached it cut, or not at all). It returns what the
// upstream saw, in order, as "METHOD path body" (-1: cut).
func (rig *framingRig) check(t testing.TB) []string {
	t.Helper()
	rig.mu.Lock()
	decided := slices.Clone(rig.decided)
	rig.mu.Unlock()
	var seen []string
	for _, u := range rig.up.requests() {
		seen = append(seen, u.String())
		if h := u.header.Get("Host"); !strings.EqualFold(strings.TrimRight(h, ":0123456789"), "shop.test") {
			t.Errorf("the upstream saw %q for Host %q, the gate decides for shop.test only", u, h)
		}
		i := slices.IndexFunc(decided, func(d decision) bool {
			return d.key == u.key && (d.body == u.body || d.left || d.body < 0 || u.body < 0)
		})
		if i < 0 {
			t.Errorf("the upstream saw %q, which the gate never decided to forward (it decided %v)", u, rig.decided)
			continue
		}
		if d := decided[i]; d.body >= 0 && u.body < 0 && !d.left {
			t.Errorf("the upstream saw %q cut, the gate read all %d bytes of it", u.key, d.body)
		}
		decided = slices.Delete(decided, i, i+1)
	}
	for _, d := range decided {
		if !d.left && d.body >= 0 {
			t.Errorf("the gate forwarded %q, the upstream never saw it", d)
		}
	}
	for _, f := range rig.up.faults() {
		t.Errorf("the upstream saw a request not in normalised form: %s", f)
	}
	return seen
}

// rawUpstream accepts connections and reads each with readStrict,
// answering every request 200 with Connection: close and reading on
// until the proxy closes: whatever the proxy sent after the end of a
// request, as the upstream frames it, is read as further requests.
type rawUpstream struct {
	ln   net.Listener
	done chan struct{}

	mu     sync.Mutex
	active int // connections being served
	seen   []upRequest
	faulty []string
}

// upRequest is a request as the upstream parsed it.
type upRequest struct {
	key    string
	body   int64 // -1: the connection ended within the body
	header http.Header
}

func (u upRequest) String() string { return fmt.Sprintf("%s %d", u.key, u.body) }

func newRawUpstream(t testing.TB) *rawUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.active++
			u.mu.Unlock()
			go u.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-u.done })
	return u
}

func (u *rawUpstream) serve(c net.Conn) {
	defer func() {
		c.Close()
		u.mu.Lock()
		u.active--
		u.mu.Unlock()
	}()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(c, 4<<20)
	for {
		req, err := readStrict(br, c)
		if req != nil {
			u.mu.Lock()
			u.seen = append(u.seen, *req)
			u.mu.Unlock()
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			u.mu.Lock()
			u.faulty = append(u.faulty, err.Error())
			u.mu.Unlock()
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	}
}

// wait returns once every connection the proxy opened has ended, and
// stops accepting more. Meanwhile it calls closeIdle now and then: the
// standard client keeps a connection it dialed for a request that was
// cancelled (a visitor gone, a body failed) for the next request, unused,
// and may finish dialing it after the request ended.
func (u *rawUpstream) wait(t testing.TB, closeIdle func()) {
	t.Helper()
	u.drain(t, closeIdle)
	u.ln.Close()
	<-u.done
	u.drain(t, closeIdle)
}

func (u *rawUpstream) drain(t testing.TB, closeIdle func()) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for {
		closeIdle()
		u.mu.Lock()
		n := u.active
		u.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the proxy kept an upstream connection open after the upstream asked to close it")
		}
	}
}

func (u *rawUpstream) requests() []upRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.seen)
}

func (u *rawUpstream) faults() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.faulty)
}

// errLine is a line the strict parser refuses.
type errLine struct {
	what string
	line []byte
}

func (e *errLine) Error() string { return fmt.Sprintf("%s: %q", e.what, e.line) }

// readLine reads one line ending in CRLF with no other CR or LF in it.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, &errLine{"line over 4 MB", line[:64]}
	}
	if err != nil {
		if len(line) > 0 && err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if !bytes.HasSuffix(line, []byte("\r\n")) || bytes.ContainsAny(line[:len(line)-2], "\r\n") {
		return nil, &errLine{"line not ended by CRLF alone", line}
	}
	return line[:len(line)-2], nil
}

// readStrict reads one request as RFC 9112 says a sender must write it,
// and as a proxy that re-frames what it forwards writes it: origin-form
// target, HTTP/1.1, token names with no space before the colon, no line
// folding, no control characters, exactly one Host, at most one of
// Content-Length (digits) and Transfer-Encoding (exactly "chunked"), no
// hop-by-hop header, and chunks without extensions. It returns io.EOF at a
// clean end between requests; a request whose head is complete is
// returned even when its body is cut.
func readStrict(br *bufio.Reader, w io.Writer) (*upRequest, error) {
	if _, err := br.Peek(1); err != nil {
		return nil, io.EOF
	}
	line, err := readLine(br)
	if err != nil {
		return nil, fmt.Errorf("request line: %w", err)
	}
	method, target, err := requestLine(line)
	if err != nil {
		return nil, err
	}
	hdr, err := readHead(br)
	if err != nil {
		return nil, err
	}
	length, chunked, err := framing(hdr)
	if err != nil {
		return nil, err
	}
	u, _ := url.ParseRequestURI(target)
	req := &upRequest{key: method + " " + pathQuery(u.Path, u.RawQuery), header: hdr}
	if strings.EqualFold(hdr.Get("Expect"), "100-continue") {
		io.WriteString(w, "HTTP/1.1 100 Continue\r\n\r\n")
	}
	if chunked {
		req.body, err = readChunked(br)
	} else {
		req.body, err = io.CopyN(io.Discard, br, length)
	}
	if err != nil {
		req.body = -1
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return req, io.EOF
		}
	}
	return req, err
}

func requestLine(line []byte) (method, target string, err error) {
	parts := strings.Split(string(line), " ")
	if len(parts) != 3 || parts[2] != "HTTP/1.1" || !isToken(parts[0]) {
		return "", "", &errLine{"request line", line}
	}
	t := parts[1]
	if !strings.HasPrefix(t, "/") || strings.IndexFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", "", &errLine{"target not in origin-form", line}
	}
	if _, err := url.ParseRequestURI(t); err != nil {
		return "", "", &errLine{"target", line}
	}
	return parts[0], t, nil
}

// readHead reads header lines up to the empty line.
func readHead(br *bufio.Reader) (http.Header, error) {
	hdr := http.Header{}
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		if len(line) == 0 {
			return hdr, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !isToken(string(name)) {
			return nil, &errLine{"header name", line}
		}
		v := strings.Trim(string(value), " \t")
		if strings.IndexFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
			return nil, &errLine{"header value", line}
		}
		hdr.Add(string(name), v)
	}
}

// hopByHop are the headers that are never forwarded; the strict parser
// refuses them (Te only as "trailers", Trailer only before chunks).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Upgrade", "Proxy-Authorization"}

// framing checks the head's framing and hop-by-hop headers and returns the
// body's length or that it is chunked.
func framing(hdr http.Header) (int64, bool, error) {
	for _, h := range hopByHop {
		if v, ok := hdr[h]; ok {
			return 0, false, fmt.Errorf("hop-by-hop header forwarded: %s: %q", h, v)
		}
	}
	if te, ok := hdr["Te"]; ok && (len(te) != 1 || te[0] != "trailers") {
		return 0, false, fmt.Errorf("hop-by-hop header forwarded: Te: %q", te)
	}
	if h := hdr["Host"]; len(h) != 1 {
		return 0, false, fmt.Errorf("%d Host headers: %q", len(h), h)
	}
	for name := range hdr {
		if folded := http.CanonicalHeaderKey(strings.ReplaceAll(name, "_", "-")); folded != name &&
			(folded == "Content-Length" || folded == "Transfer-Encoding" || folded == "Host" || slices.Contains(hopByHop, folded)) {
			return 0, false, fmt.Errorf("header %q reads as %s to a server that takes _ for -", name, folded)
		}
	}
	cl, te := hdr["Content-Length"], hdr["Transfer-Encoding"]
	switch {
	case len(cl) > 0 && len(te) > 0:
		return 0, false, fmt.Errorf("both Content-Length %q and Transfer-Encoding %q", cl, te)
	case len(te) > 0:
		if len(te) != 1 || te[0] != "chunked" {
			return 0, false, fmt.Errorf("Transfer-Encoding %q", te)
		}
		return 0, true, nil
	case len(cl) > 0:
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if len(cl) != 1 || err != nil || n < 0 || strings.TrimLeft(cl[0], "0123456789") != "" {
			return 0, false, fmt.Errorf("Content-Length %q", cl)
		}
		return n, false, nil
	}
	if _, ok := hdr["Trailer"]; ok {
		return 0, false, errors.New("Trailer without chunks")
	}
	return 0, false, nil
}

// readChunked reads a chunked body: sizes in hex without extensions, each
// chunk ended by CRLF, then trailer lines and an empty line.
func readChunked(br *bufio.Reader) (int64, error) {
	var total int64
	for {
		line, err := readLine(br)
		if err != nil {
			return total, err
		}
		if len(line) == 0 || len(line) > 15 || strings.Trim(string(line), "0123456789abcdefABCDEF") != "" {
			return total, &errLine{"chunk size", line}
		}
		n, _ := strconv.ParseInt(string(line), 16, 64)
		if n == 0 {
			if _, err := readHead(br); err != nil {
				return total, fmt.Errorf("trailer: %w", err)
			}
			return total, nil
		}
		if _, err := io.CopyN(io.Discard, br, n); err != nil {
			return total, err
		}
		total += n
		if end, err := readLine(br); err != nil || len(end) != 0 {
			return total, fmt.Errorf("chunk not ended by CRLF: %w", err)
		}
	}
}

func isToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return r >= 0x7f || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) < 0
}
