package proxy

import (
	"bufio"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// seen is what the conformance upstream reports of a request it got.
type seen struct {
	URI      string
	Host     string
	Header   http.Header
	Chunked  bool
	Length   int64
	BodySize int64
	BodySHA  string
}

// conformanceUpstream answers by the X-Case header; without it, it reports
// the request as it arrived. next releases the second half of /chunked.
func conformanceUpstream(t *testing.T, next chan struct{}) *httptest.Server {
	up := websocket.Upgrader{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Case") {
		case "chunked":
			io.WriteString(w, "first;")
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, "second")
		case "slow":
			<-r.Context().Done()
		case "big":
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			w.Header().Set("Content-Length", strconv.Itoa(n))
			io.Copy(w, newPattern(int64(n)))
		case "head":
			w.Header().Set("Content-Length", "1234")
			w.Header().Set("Content-Type", "text/plain")
		case "204":
			w.WriteHeader(http.StatusNoContent)
		case "304":
			w.Header().Set("Etag", `"v1"`)
			w.WriteHeader(http.StatusNotModified)
		case "hop":
			w.Header().Set("Connection", "X-Up-Secret")
			w.Header().Set("X-Up-Secret", "1")
			w.Header().Set("Keep-Alive", "timeout=5")
			w.Header().Set("Proxy-Authenticate", "Basic")
			w.Header().Set("X-Up-Kept", "1")
			io.WriteString(w, "ok")
		case "cut":
			c, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			if r.URL.Query().Has("chunked") {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n")
			} else {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
			}
			c.Close()
		case "bighdr":
			w.Header().Set("X-Big", strings.Repeat("b", 20000))
		case "multi":
			w.Header().Add("Set-Cookie", "a=1; Path=/")
			w.Header().Add("Set-Cookie", "a=2; Path=/x")
			w.Header().Add("X-Multi", "1")
			w.Header().Add("X-Multi", "2")
		case "ws":
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			for {
				mt, m, err := c.ReadMessage()
				if err != nil {
					return
				}
				c.WriteMessage(mt, append([]byte("echo:"), m...))
			}
		default:
			h := sha256.New()
			n, _ := io.Copy(h, r.Body)
			json.NewEncoder(w).Encode(seen{URI: r.RequestURI, Host: r.Host, Header: r.Header,
				Chunked: len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked",
				Length:  r.ContentLength, BodySize: n, BodySHA: hex.EncodeToString(h.Sum(nil))})
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// pattern is an endless deterministic byte stream.
type pattern struct{ off *int }

func (r pattern) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte('a' + (*r.off+i)%26)
	}
	*r.off += len(p)
	return len(p), nil
}

func newPattern(n int64) io.Reader { return io.LimitReader(pattern{new(int)}, n) }

func patternSHA(n int64) string {
	h := sha256.New()
	io.Copy(h, newPattern(n))
	return hex.EncodeToString(h.Sum(nil))
}

// conformanceProxy is the proxy in front of upstream on the given path,
// trusting 127.0.0.1 as a load balancer when trusted is set.
func conformanceProxy(t testing.TB, vs visitorServer, upstream string, fw Forwarding, trusted bool, timeout time.Duration) string {
	server := ""
	if trusted {
		server = "server {\n  trusted_proxies = [\"127.0.0.1/32\"]\n}\n"
	}
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf(`%shost "shop.test" {
  location "/" {
    upstream "%s" {}
  }
}`, server, upstream)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, Options{Store: &tableStore{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Forwarding: fw, UpstreamTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := vs.start(h)
	t.Cleanup(func() { stop(); h.Close() })
	return addr
}

// env is one transport's set-up for the conformance table.
type env struct {
	t       *testing.T
	vs      string // the visitor server's name
	proxy   string // host:port
	trusted string // a proxy trusting 127.0.0.1
	down    string // a proxy whose upstream refuses connections
	next    chan struct{}
	client  *http.Client
	up      *httptest.Server
}

func (e *env) do(req *http.Request) *http.Response {
	e.t.Helper()
	req.Host = "shop.test"
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { res.Body.Close() })
	return res
}

func (e *env) get(base, xcase, path string) *http.Response {
	req, _ := http.NewRequest("GET", "http://"+base+path, nil)
	if xcase != "" {
		req.Header.Set("X-Case", xcase)
	}
	return e.do(req)
}

// sendHeaders sends a GET for / to addr with the headers h and returns
// what the upstream saw.
func (e *env) sendHeaders(addr string, h http.Header) seen {
	e.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header = h.Clone()
	return decodeSeen(e.t, e.do(req))
}

// wantHeaders fails the case unless the upstream saw each header of want
// with exactly its values, and none at all of those whose values are nil.
func (e *env) wantHeaders(s seen, want http.Header) {
	e.t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		got, ok := s.Header[name]
		if !slices.Equal(got, want[name]) || (want[name] == nil && ok) {
			e.t.Errorf("upstream saw %s %q, want %q", name, got, want[name])
		}
	}
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeSeen(t *testing.T, res *http.Response) seen {
	t.Helper()
	var s seen
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		t.Fatalf("status %d: %v", res.StatusCode, err)
	}
	return s
}

// raw sends the request bytes over one connection and reads one answer.
func (e *env) raw(req string) (*http.Response, net.Conn, *bufio.Reader) {
	e.t.Helper()
	c, err := net.Dial("tcp", e.proxy)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		e.t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return res, c, br
}

// TestForwardingConformance runs a table of HTTP semantics against both
// paths to the upstream, the standard library's and fasthttp's, behind
// every visitor server.
func TestForwardingConformance(t *testing.T) {
	for _, vs := range visitorServers {
		for _, fw := range upstreamClients {
			t.Run(vs.name+"/"+fw.name, func(t *testing.T) { runConformance(t, vs, fw.fw) })
		}
	}
}

func runConformance(t *testing.T, vs visitorServer, fw Forwarding) {
	{
		{
			next := make(chan struct{})
			up := conformanceUpstream(t, next)
			upHost := strings.TrimPrefix(up.URL, "http://")
			ln, _ := net.Listen("tcp", "127.0.0.1:0")
			downHost := ln.Addr().String()
			ln.Close()
			timeout := 2 * time.Second
			e := &env{t: t, vs: vs.name, next: next, up: up,
				proxy:   conformanceProxy(t, vs, upHost, fw, false, timeout),
				trusted: conformanceProxy(t, vs, upHost, fw, true, timeout),
				down:    conformanceProxy(t, vs, downHost, fw, false, timeout),
				client:  &http.Client{Transport: &http.Transport{}}}
			t.Cleanup(e.client.CloseIdleConnections)
			for _, tc := range conformanceCases {
				t.Run(tc.name, func(t *testing.T) {
					e := *e
					e.t = t
					tc.run(&e)
				})
			}
		}
	}
}

var conformanceCases = []struct {
	name string
	run  func(e *env)
}{
	{"chunked request body", func(e *env) {
		pr, pw := io.Pipe()
		go func() {
			for i := 0; i < 3; i++ {
				io.WriteString(pw, "part;")
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", "http://"+e.proxy+"/upload", pr)
		s := decodeSeen(e.t, e.do(req))
		want := sha256.Sum256([]byte("part;part;part;"))
		if e.vs == "fasthttp" && s.Length == 15 && !s.Chunked {
			// fasthttp's server read the body whole: its length is known.
			s.Chunked, s.Length = true, -1
		}
		if !s.Chunked || s.Length != -1 || s.BodySHA != hex.EncodeToString(want[:]) {
			e.t.Fatalf("upstream saw chunked %v, length %d, body %d bytes", s.Chunked, s.Length, s.BodySize)
		}
	}},
	{"chunked response streams", func(e *env) {
		res := e.get(e.proxy, "chunked", "/")
		if len(res.TransferEncoding) == 0 || res.TransferEncoding[0] != "chunked" {
			e.t.Fatalf("transfer encoding %v", res.TransferEncoding)
		}
		first := make([]byte, len("first;"))
		if _, err := io.ReadFull(res.Body, first); err != nil || string(first) != "first;" {
			e.t.Fatalf("first part %q, %v", first, err)
		}
		// The second half is written only now: the first came through
		// before the upstream finished.
		e.next <- struct{}{}
		if rest := readAll(e.t, res); rest != "second" {
			e.t.Fatalf("rest %q", rest)
		}
	}},
	{"expect 100-continue", func(e *env) {
		c, err := net.Dial("tcp", e.proxy)
		if err != nil {
			e.t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(c, "PUT /put HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
			e.t.Fatalf("before the body: %q, %v", line, err)
		}
		if l, _ := br.ReadString('\n'); l != "\r\n" {
			e.t.Fatalf("100 Continue then %q", l)
		}
		io.WriteString(c, "hello")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		s := decodeSeen(e.t, res)
		want := sha256.Sum256([]byte("hello"))
		if res.StatusCode != 200 || s.BodySHA != hex.EncodeToString(want[:]) || s.Length != 5 {
			e.t.Fatalf("status %d, upstream saw %+v", res.StatusCode, s)
		}
	}},
	{"large upload streamed", func(e *env) {
		const n = 48 << 20
		before := totalAlloc()
		req, _ := http.NewRequest("POST", "http://"+e.proxy+"/big", newPattern(n))
		req.ContentLength = n
		if e.vs == "fasthttp" {
			// fasthttp's server reads a body whole, up to its bound: it
			// answers 413 on the Content-Length and closes, which the
			// client may meet first as a write that failed.
			req.Host = "shop.test"
			res, err := e.client.Do(req)
			if err == nil {
				res.Body.Close()
			}
			if err == nil && res.StatusCode != http.StatusRequestEntityTooLarge ||
				err != nil && !strings.Contains(err.Error(), "broken pipe") && !strings.Contains(err.Error(), "connection reset") {
				e.t.Fatalf("a body over the bound: %v %v, want 413", res, err)
			}
			return
		}
		s := decodeSeen(e.t, e.do(req))
		if s.BodySize != n || s.BodySHA != patternSHA(n) {
			e.t.Fatalf("upstream got %d bytes", s.BodySize)
		}
		// Client, proxy and upstream run in this process: buffering the
		// body anywhere would allocate at least its size.
		if a := totalAlloc() - before; a > n/3 {
			e.t.Fatalf("%d MB allocated for a %d MB upload", a>>20, n>>20)
		}
	}},
	{"large download streamed", func(e *env) {
		const n = 48 << 20
		before := totalAlloc()
		res := e.get(e.proxy, "big", "/big?n="+strconv.Itoa(n))
		h := sha256.New()
		got, err := io.Copy(h, res.Body)
		if err != nil || got != n || hex.EncodeToString(h.Sum(nil)) != patternSHA(n) {
			e.t.Fatalf("got %d bytes, %v", got, err)
		}
		if a := totalAlloc() - before; a > n/3 {
			e.t.Fatalf("%d MB allocated for a %d MB download", a>>20, n>>20)
		}
	}},
	{"slow upstream 504", func(e *env) {
		res := e.get(e.proxy, "slow", "/")
		if body := readAll(e.t, res); res.StatusCode != http.StatusGatewayTimeout || !strings.HasPrefix(body, "Gateway timeout:") {
			e.t.Fatalf("%d %q", res.StatusCode, body)
		}
	}},
	{"upstream down 502", func(e *env) {
		res := e.get(e.down, "", "/")
		if body := readAll(e.t, res); res.StatusCode != http.StatusBadGateway || !strings.HasPrefix(body, "Bad gateway:") {
			e.t.Fatalf("%d %q", res.StatusCode, body)
		}
	}},
	{"hop-by-hop request headers", func(e *env) {
		s := e.sendHeaders(e.proxy, http.Header{
			"Connection": {"X-Secret, keep-alive"}, "X-Secret": {"1"}, "Keep-Alive": {"timeout=5"},
			"Proxy-Authorization": {"Basic eDp5"}, "Proxy-Connection": {"keep-alive"}, "Te": {"gzip"},
			"Trailer": {"X-T"}, "Upgrade": {"h2c"}, "X-Kept": {"1"},
		})
		e.wantHeaders(s, http.Header{
			"Connection": nil, "X-Secret": nil, "Keep-Alive": nil, "Proxy-Authorization": nil,
			"Proxy-Connection": nil, "Te": nil, "Trailer": nil, "Upgrade": nil, "X-Kept": {"1"},
		})
		if s.Host != "shop.test" {
			e.t.Fatalf("host lost: %+v", s)
		}
	}},
	{"hop-by-hop response headers", func(e *env) {
		res := e.get(e.proxy, "hop", "/")
		for _, h := range []string{"X-Up-Secret", "Keep-Alive", "Proxy-Authenticate"} {
			if v, ok := res.Header[h]; ok {
				e.t.Errorf("%s reached the visitor: %q", h, v)
			}
		}
		if res.Header.Get("X-Up-Kept") != "1" || readAll(e.t, res) != "ok" {
			e.t.Fatalf("answer lost: %v", res.Header)
		}
	}},
	{"upstream body cut short", func(e *env) {
		// The visitor sees an error, before or within the body, never a
		// clean answer with a short body.
		for _, path := range []string{"/", "/?chunked"} {
			req, _ := http.NewRequest("GET", "http://"+e.proxy+path, nil)
			req.Host = "shop.test"
			req.Header.Set("X-Case", "cut")
			res, err := e.client.Do(req)
			if err != nil {
				continue
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err == nil {
				e.t.Errorf("%s: %d %q: a cut body ended cleanly", path, res.StatusCode, body)
			}
		}
	}},
	{"upstream closed its idle connections", func(e *env) {
		// The proxy holds kept-alive connections to the upstream; the
		// upstream closes them all while idle (its keep-alive timeout).
		// The next request goes through on a new one. (A request with a
		// body is not sent again once it went out on a connection closed
		// at that very moment, on either path, as nginx does not; the
		// fast path closes connections idle for a second, before common
		// upstreams do.)
		decodeSeen(e.t, e.get(e.proxy, "", "/warm"))
		e.up.CloseClientConnections()
		res := e.get(e.proxy, "", "/after")
		if res.StatusCode != 200 {
			e.t.Fatalf("after the upstream closed: %d %s", res.StatusCode, readAll(e.t, res))
		}
		if s := decodeSeen(e.t, res); s.URI != "/after" {
			e.t.Fatalf("after the upstream closed: %+v", s)
		}
	}},
	{"large headers both ways", func(e *env) {
		res := e.get(e.proxy, "bighdr", "/")
		if res.StatusCode != 200 || len(res.Header.Get("X-Big")) != 20000 {
			e.t.Fatalf("%d, answer header of %d bytes", res.StatusCode, len(res.Header.Get("X-Big")))
		}
		if s := e.sendHeaders(e.proxy, http.Header{"X-Big": {strings.Repeat("r", 20000)}}); len(s.Header.Get("X-Big")) != 20000 {
			e.t.Fatalf("request header of %d bytes", len(s.Header.Get("X-Big")))
		}
	}},
	{"repeated headers", func(e *env) {
		res := e.get(e.proxy, "multi", "/")
		if got := [2][]string{res.Header["Set-Cookie"], res.Header["X-Multi"]}; fmt.Sprint(got) != "[[a=1; Path=/ a=2; Path=/x] [1 2]]" {
			e.t.Fatalf("answer's repeated headers: %q", got)
		}
		h := http.Header{"X-Rep": {"1", "2"}, "Cookie": {"a=1; b=2"}}
		e.wantHeaders(e.sendHeaders(e.proxy, h), h)
	}},
	{"x-forwarded from a visitor", func(e *env) {
		s := e.sendHeaders(e.proxy, http.Header{
			"X-Forwarded-For": {"6.6.6.6"}, "X-Forwarded-Proto": {"https"},
			"X-Forwarded-Host": {"evil.test"}, "Forwarded": {"for=6.6.6.6"},
		})
		e.wantHeaders(s, http.Header{
			"X-Forwarded-For": {"127.0.0.1"}, "X-Forwarded-Proto": {"http"},
			"X-Forwarded-Host": {"shop.test"}, "Forwarded": nil,
		})
	}},
	{"x-forwarded from a trusted proxy", func(e *env) {
		s := e.sendHeaders(e.trusted, http.Header{"X-Forwarded-For": {"203.0.113.9", "198.51.100.2"}, "X-Forwarded-Proto": {"https"}})
		e.wantHeaders(s, http.Header{"X-Forwarded-For": {"203.0.113.9, 198.51.100.2, 127.0.0.1"}, "X-Forwarded-Proto": {"https"}})
	}},
	{"head", func(e *env) {
		req, _ := http.NewRequest("HEAD", "http://"+e.proxy+"/", nil)
		req.Header.Set("X-Case", "head")
		res := e.do(req)
		if res.StatusCode != 200 || res.ContentLength != 1234 || readAll(e.t, res) != "" {
			e.t.Fatalf("%d, length %d", res.StatusCode, res.ContentLength)
		}
		// The connection is still good for the next request.
		if s := decodeSeen(e.t, e.get(e.proxy, "", "/after-head")); s.URI != "/after-head" {
			e.t.Fatalf("after HEAD: %+v", s)
		}
	}},
	{"204 and 304 without a body", func(e *env) {
		req := "GET /a HTTP/1.1\r\nHost: shop.test\r\nX-Case: 204\r\n\r\n" +
			"GET /b HTTP/1.1\r\nHost: shop.test\r\nX-Case: 304\r\n\r\n" +
			"GET /c HTTP/1.1\r\nHost: shop.test\r\n\r\n"
		res, _, br := e.raw(req)
		if res.StatusCode != 204 || readAll(e.t, res) != "" {
			e.t.Fatalf("first: %d", res.StatusCode)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != 304 || readAll(e.t, res) != "" || res.Header.Get("Etag") != `"v1"` {
			e.t.Fatalf("second: %v %v", res, err)
		}
		// A body after either would be read as this answer's start.
		res, err = http.ReadResponse(br, nil)
		if err != nil || decodeSeen(e.t, res).URI != "/c" {
			e.t.Fatalf("third: %v", err)
		}
	}},
	{"websocket upgrade", func(e *env) {
		d := websocket.Dialer{NetDial: func(string, string) (net.Conn, error) { return net.Dial("tcp", e.proxy) }}
		c, res, err := d.Dial("ws://shop.test/ws", http.Header{"X-Case": {"ws"}})
		if err != nil {
			e.t.Fatalf("dial: %v %v", res, err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		for _, m := range []string{"one", "two"} {
			if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
				e.t.Fatal(err)
			}
			if _, got, err := c.ReadMessage(); err != nil || string(got) != "echo:"+m {
				e.t.Fatalf("%q %v", got, err)
			}
		}
	}},
	{"request target canonical, query byte for byte", func(e *env) {
		for _, tc := range []struct{ uri, want string }{
			{"/b/c%20d?x=1&y=%2B&z=a+b&&w", "/b/c%20d?x=1&y=%2B&z=a+b&&w"},
			{"/p;q=1/%7E/%41", "/p;q=1/~/A"},
			{"//double//slash/./../x?q=%20", "/double/x?q=%20"},
			{"/caf%c3%a9?n=%E2%82%AC", "/caf%C3%A9?n=%E2%82%AC"},
			{"http://shop.test/static/../x?a=/../b", "/x?a=/../b"},
		} {
			res, _, _ := e.raw("GET " + tc.uri + " HTTP/1.1\r\nHost: shop.test\r\n\r\n")
			if s := decodeSeen(e.t, res); s.URI != tc.want {
				e.t.Errorf("sent %q, upstream got %q, want %q", tc.uri, s.URI, tc.want)
			}
		}
		res, _, _ := e.raw("GET /a%2Fb HTTP/1.1\r\nHost: shop.test\r\n\r\n")
		if res.StatusCode != http.StatusBadRequest {
			e.t.Errorf("an encoded /: %d, want 400", res.StatusCode)
		}
	}},
}

func totalAlloc() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.TotalAlloc)
}

// TestForwardingTLSUpstream sends requests to an https upstream on both
// paths: verified with the upstream's root, refused (502) without it.
func TestForwardingTLSUpstream(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s tls=%v", r.Host, r.RequestURI, r.TLS != nil)
	}))
	defer up.Close()
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate())
	cfg, err := Parse("t.hcl", []byte(fmt.Sprintf("host \"shop.test\" {\n  location \"/\" {\n    upstream \"%s\" {}\n  }\n}\n", up.URL)))
	if err != nil {
		t.Fatal(err)
	}
	for _, fw := range []Forwarding{ForwardStd, ForwardFast} {
		for _, trusted := range []bool{true, false} {
			o := Options{Store: &tableStore{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Forwarding: fw}
			if trusted {
				o.UpstreamTLS = &tls.Config{RootCAs: roots}
			}
			h, err := New(cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			p := httptest.NewServer(h)
			req, _ := http.NewRequest("GET", p.URL+"/a%20b?q=1", nil)
			req.Host = "shop.test"
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			p.Close()
			h.Close()
			switch {
			case trusted && (res.StatusCode != 200 || string(body) != "shop.test /a%20b?q=1 tls=true"):
				t.Errorf("path %d with the root: %d %q", fw, res.StatusCode, body)
			case !trusted && res.StatusCode != http.StatusBadGateway:
				t.Errorf("path %d without the root: %d %q", fw, res.StatusCode, body)
			}
		}
	}
}
