package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// fastRig is a proxy with one room before an upstream that answers "ok",
// and an admitted visitor's cookie (the second request's: the first's is
// provisional).
type fastRig struct {
	h      *Handler
	store  *tableStore
	cookie string
}

func newFastRig(t testing.TB, extra string) *fastRig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A fasthttp upstream, which allocates nothing per request either.
	up := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetBytesV("X-Upstream", ctx.Request.Header.Peek("X-Forwarded-For"))
		if string(ctx.Path()) == "/release" {
			ctx.Response.Header.Set(ReleaseHeader, "1")
		}
		ctx.SetBodyString("ok")
	}}
	go up.Serve(ln)
	t.Cleanup(func() { _ = up.Shutdown() })
	cfg, err := Parse("fast.hcl", []byte(fmt.Sprintf(`host "shop.test" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = 1000
      on_store_error = "wait"
      session        = "1h"
    }
    %s
  }
}`, ln.Addr(), extra)))
	if err != nil {
		t.Fatal(err)
	}
	store := &tableStore{tables: map[string]*capacity.Table{}}
	h, err := New(cfg, Options{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	rig := &fastRig{h: h, store: store}
	for range 2 {
		r := httptest.NewRequest("GET", "http://shop.test/", nil)
		r.RequestURI = "/"
		if rig.cookie != "" {
			r.Header.Set("Cookie", rig.cookie)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("admission: %d", w.Code)
		}
		c := w.Result().Cookies()[0]
		rig.cookie = c.Name + "=" + c.Value
	}
	return rig
}

// ctx is a visitor's request from 192.0.2.1 as fasthttp's server hands
// it over.
func (rig *fastRig) ctx(target, cookie string, edit func(*fasthttp.Request)) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod("GET")
	req.SetRequestURI(target)
	req.Header.SetHost("shop.test")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	if edit != nil {
		edit(&req)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4711}, nil)
	return ctx
}

// TestFastPathAdmitted: the admitted visitor's request is served by the
// fast path alone, forwarded with the peer as X-Forwarded-For; every
// request that needs more than the cookie is left to the standard path
// untouched.
func TestFastPathAdmitted(t *testing.T) {
	rig := newFastRig(t, "")
	ctx := rig.ctx("/a?b=c", rig.cookie, nil)
	if !rig.h.admitFast(ctx) {
		t.Fatal("an admitted visitor's GET is not taken by the fast path")
	}
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Body()) != "ok" ||
		string(ctx.Response.Header.Peek("X-Upstream")) != "192.0.2.1" {
		t.Fatalf("answer %d %q, X-Upstream %q", ctx.Response.StatusCode(), ctx.Response.Body(), ctx.Response.Header.Peek("X-Upstream"))
	}
	for name, c := range map[string]*fasthttp.RequestCtx{
		"no cookie":          rig.ctx("/", "", nil),
		"a forged cookie":    rig.ctx("/", rig.cookie[:len(rig.cookie)-2]+"AA", nil),
		"a dot segment":      rig.ctx("/a/../b", rig.cookie, nil),
		"an encoded byte":    rig.ctx("/%61", rig.cookie, nil),
		"a POST":             rig.ctx("/", rig.cookie, func(r *fasthttp.Request) { r.Header.SetMethod("POST") }),
		"an upgrade":         rig.ctx("/", rig.cookie, func(r *fasthttp.Request) { r.Header.Set("Upgrade", "websocket") }),
		"another host":       rig.ctx("/", rig.cookie, func(r *fasthttp.Request) { r.Header.SetHost("other.test") }),
		"absolute-form":      rig.ctx("http://shop.test/", rig.cookie, nil),
		"a Host port a word": rig.ctx("/", rig.cookie, func(r *fasthttp.Request) { r.Header.SetHost("shop.test:x") }),
	} {
		if rig.h.admitFast(c) {
			t.Errorf("%s: taken by the fast path", name)
		}
		if c.Response.StatusCode() != 200 || len(c.Response.Body()) != 0 {
			t.Errorf("%s: the fast path answered it", name)
		}
	}
}

// TestFastPathRenewalAndRelease: a visitor in the last fifth of the
// session renews through the standard path; an upstream's release header
// frees the slot and replaces the cookie on the fast path too, and the
// old cookie then no longer passes it.
func TestFastPathRenewalAndRelease(t *testing.T) {
	rig := newFastRig(t, "")
	now := time.Now()
	rig.h.gates[0].now = func() time.Time { return now.Add(50 * time.Minute) }
	if rig.h.admitFast(rig.ctx("/", rig.cookie, nil)) {
		t.Fatal("a cookie due for renewal is taken by the fast path")
	}
	rig.h.gates[0].now = time.Now
	ctx := rig.ctx("/release", rig.cookie, nil)
	if !rig.h.admitFast(ctx) {
		t.Fatal("not taken by the fast path")
	}
	if sc := string(ctx.Response.Header.Peek("Set-Cookie")); !strings.HasPrefix(sc, strings.SplitN(rig.cookie, "=", 2)[0]+"=") {
		t.Fatalf("released without a new cookie: %q", sc)
	}
	if len(ctx.Response.Header.Peek(ReleaseHeader)) != 0 {
		t.Fatal("the release header reached the visitor")
	}
	if rig.h.admitFast(rig.ctx("/", rig.cookie, nil)) {
		t.Fatal("a released visitor's old cookie is taken by the fast path")
	}
}

// TestFastPathNoAllocs holds the admitted visitor's request to no
// allocation: the framing checks, the route, the cookie, the renewal
// note, the request written upstream, its answer read and copied back;
// and the same with a canned answer, the proxy's own work alone.
func TestFastPathNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rig := newFastRig(t, "")
	rt := rig.h.hosts["shop.test"][0]
	fwd := rt.fast.(*fastForwarder)
	serve := rig.h.FastServer().Handler // the framing checks included
	ctx := rig.ctx("/", rig.cookie, nil)
	measure := func(t *testing.T, forward func(*fasthttp.RequestCtx, *fastAdmission)) float64 {
		taken := 0
		rt.fast = fastFunc(func(ctx *fasthttp.RequestCtx, a *fastAdmission) { taken++; forward(ctx, a) })
		allocs := testing.AllocsPerRun(500, func() {
			ctx.Response.Reset()
			serve(ctx)
			if ctx.Response.StatusCode() != 200 {
				t.Fatalf("answered %d", ctx.Response.StatusCode())
			}
		})
		if taken != 501 {
			t.Fatalf("the fast path took %d of 501 requests", taken)
		}
		return allocs
	}
	if allocs := measure(t, fwd.serveVisitor); allocs != 0 {
		t.Fatalf("%v allocations per admitted request, the upstream's answer included, want 0", allocs)
	}
	canned := func(ctx *fasthttp.RequestCtx, a *fastAdmission) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		fwd.visitorRequest(req, ctx, a.host)
		resp.Header.Set("Content-Type", "text/plain")
		fwd.visitorAnswer(ctx, resp, nil, a)
		fasthttp.ReleaseRequest(req)
	}
	if allocs := measure(t, canned); allocs != 0 {
		t.Fatalf("%v allocations per admitted request in the proxy's own work, want 0", allocs)
	}
}

// BenchmarkFastAdmitted is the admitted visitor's request on the fast
// visitor server's handler, forwarding to a local upstream included (run
// with -benchmem).
func BenchmarkFastAdmitted(b *testing.B) {
	rig := newFastRig(b, "")
	serve := rig.h.FastServer().Handler
	ctx := rig.ctx("/", rig.cookie, nil)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		serve(ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatal("not admitted")
		}
	}
}

// fastFunc is a function as a fastForward.
type fastFunc func(ctx *fasthttp.RequestCtx, a *fastAdmission)

func (f fastFunc) serveVisitor(ctx *fasthttp.RequestCtx, a *fastAdmission) { f(ctx, a) }

// TestFastServerRecovers: a panic while serving one visitor is that
// visitor's 500, not the end of the proxy.
func TestFastServerRecovers(t *testing.T) {
	rig := newFastRig(t, "")
	rig.h.hosts["shop.test"][0].next = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	addr, stop := startFast(rig.h)
	defer stop()
	for range 2 {
		w, ok := sendWire(addr, "POST / HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 0\r\nCookie: "+rig.cookie+"\r\n\r\n")
		if !ok || w.Code != http.StatusInternalServerError {
			t.Fatalf("answer %v %v, want 500", ok, w)
		}
	}
}

// TestFastServerConnectionBound: past its bound of connections at once,
// the server answers 503 and closes, and the metric counts it.
func TestFastServerConnectionBound(t *testing.T) {
	rig := newFastRig(t, "")
	s := rig.h.FastServer()
	s.Concurrency = 1
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Shutdown()
	held, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// The held connection is served once it has been answered.
	if _, err := io.WriteString(held, "GET / HTTP/1.1\r\nHost: shop.test\r\nCookie: "+rig.cookie+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if res, err := http.ReadResponse(bufio.NewReader(held), nil); err != nil || res.StatusCode != 200 {
		t.Fatalf("the first connection: %v %v", res, err)
	}
	w, ok := sendWire(ln.Addr().String(), "GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n")
	if !ok || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("over the bound: %v %v, want 503", ok, w)
	}
	if n := counterOf(t, rig.h.Collector(), "aditus_queue_proxy_visitor_connections_refused_total"); n != 1 {
		t.Fatalf("refusals counted %v, want 1", n)
	}
}

// counterOf is the value of the counter called name that c collects.
func counterOf(t *testing.T, c prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestConnPool: connections are kept and reused after an answer read
// whole, closed after one that was not, bounded in number (a request
// finding none free within the timeout fails), and a kept connection the
// upstream closed meanwhile is replaced without the visitor seeing it.
func TestConnPool(t *testing.T) {
	var mu sync.Mutex
	accepted := 0
	closed := make(chan struct{}, 16)
	up := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/close" {
			ctx.SetConnectionClose()
		}
		ctx.SetBodyString("ok")
	}, IdleTimeout: 500 * time.Millisecond, ConnState: func(_ net.Conn, st fasthttp.ConnState) {
		switch st {
		case fasthttp.StateNew:
			mu.Lock()
			accepted++
			mu.Unlock()
		case fasthttp.StateClosed:
			closed <- struct{}{}
		}
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(ln)
	defer up.Shutdown()
	p := newConnPool(ln.Addr().String(), 200*time.Millisecond)
	get := func(path string) (*upConn, *fasthttp.Response, error) {
		req := fasthttp.AcquireRequest()
		defer fasthttp.ReleaseRequest(req)
		req.SetRequestURI(path)
		req.Header.SetHost("shop.test")
		resp := fasthttp.AcquireResponse()
		uc, err := p.do(req, resp)
		return uc, resp, err
	}
	// whole reads the answer's body to its end and gives the connection
	// back.
	whole := func(uc *upConn, resp *fasthttp.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.BodyStream())
		if err != nil || string(b) != "ok" {
			t.Fatalf("body %q, %v", b, err)
		}
		p.done(uc, resp, true)
	}
	for range 5 {
		whole(get("/"))
	}
	uc, resp, _ := get("/")
	p.done(uc, resp, false) // not read: closed, not kept
	whole(get("/close"))    // the upstream closes it
	mu.Lock()
	if accepted != 2 {
		t.Errorf("%d connections for 5 answers read whole, then one unread and one closing, want 2", accepted)
	}
	mu.Unlock()
	for range 2 {
		<-closed
	}
	// A kept connection the upstream closed while idle (its idle
	// timeout is below the pool's).
	whole(get("/"))
	<-closed
	whole(get("/"))
	mu.Lock()
	if accepted != 4 {
		t.Errorf("%d connections, want 4: the closed one replaced", accepted)
	}
	mu.Unlock()
	p = newConnPool(ln.Addr().String(), 200*time.Millisecond)
	p.slots = make(chan struct{}, 1)
	held, resp1, err := get("/")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := get("/"); !errors.Is(err, errNoFreeConn) {
		t.Errorf("over the bound: %v, want %v", err, errNoFreeConn)
	}
	p.done(held, resp1, false)
	// A closed pool (its handler replaced by a reload) keeps nothing.
	whole(get("/"))
	p.close()
	uc, resp, err = get("/")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.BodyStream())
	p.done(uc, resp, true)
	if len(p.idle) != 0 || len(p.slots) != 0 {
		t.Fatalf("a closed pool keeps %d connections, holds %d slots", len(p.idle), len(p.slots))
	}
}

// TestReloadOnFastServer: fasthttp's server serves the configuration in
// force, on the fast path too, from the request after a reload on.
func TestReloadOnFastServer(t *testing.T) {
	upstream := func(body string) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(body) }}
		go s.Serve(ln)
		t.Cleanup(func() { _ = s.Shutdown() })
		return ln.Addr().String()
	}
	path := filepath.Join(t.TempDir(), "proxy.hcl")
	write := func(up string) {
		src := fmt.Sprintf("host \"shop.test\" {\n  location \"/\" {\n    upstream %q {}\n  }\n}\n", up)
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(upstream("before"))
	r, err := NewReloadable(path, Options{Store: &tableStore{tables: map[string]*capacity.Table{}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	s := r.FastServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Shutdown()
	get := func() string {
		w, ok := sendWire(ln.Addr().String(), "GET / HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n")
		if !ok || w.Code != 200 {
			t.Fatalf("answer %v %v", ok, w)
		}
		return w.Body.String()
	}
	if b := get(); b != "before" {
		t.Fatalf("before the reload: %q", b)
	}
	write(upstream("after"))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if b := get(); b != "after" {
		t.Fatalf("after the reload: %q, want the new upstream's", b)
	}
}
