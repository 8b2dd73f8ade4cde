package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"

	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// maxBufferedAnswer is the largest answer body the fast path copies into
// the visitor's answer before sending it; a larger or unsized one is
// streamed.
const maxBufferedAnswer = 256 << 10

// serveVisitor forwards a request the fast path admitted (a GET without a
// body, on a canonical path, from an untrusted peer) and answers the
// visitor: the same request and answer as ServeHTTP's forwarding makes.
func (f *fastForwarder) serveVisitor(ctx *fasthttp.RequestCtx, a *fastAdmission) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	f.visitorRequest(req, ctx, a.host)
	resp.Header.SetNoDefaultContentType(true)
	var uc *upConn
	var err error
	if f.pool != nil {
		uc, err = f.pool.do(req, resp)
	} else {
		err = f.client.Do(req, resp)
	}
	fasthttp.ReleaseRequest(req)
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		f.visitorFailed(ctx, err)
		return
	}
	f.visitorAnswer(ctx, resp, uc, a)
}

// finish releases the upstream's answer resp, on connection uc of the
// pool (nil: fasthttp's client's), whose body was read whole or not.
func (f *fastForwarder) finish(resp *fasthttp.Response, uc *upConn, whole bool) {
	if uc != nil {
		f.pool.done(uc, resp, whole)
	} else {
		_ = resp.CloseBodyStream()
	}
	fasthttp.ReleaseResponse(resp)
}

// visitorRequest fills req from the visitor's request: method, target,
// Host, the end-to-end headers and the forwarding headers of a peer that
// is no trusted proxy (its own are not passed on).
func (f *fastForwarder) visitorRequest(req *fasthttp.Request, ctx *fasthttp.RequestCtx, host []byte) {
	in := &ctx.Request.Header
	req.Header.DisableNormalizing()
	req.Header.SetNoDefaultContentType(true)
	req.Header.SetMethodBytes(in.Method())
	req.SetRequestURIBytes(in.RequestURI())
	if f.client.IsTLS {
		req.URI().SetScheme("https")
	}
	req.Header.SetHostBytes(host)
	req.UseHostHeader = true
	named := in.Peek("Connection")
	for k, v := range in.All() {
		if !dropVisitorHeader(k, named) {
			req.Header.AddBytesKV(k, v)
		}
	}
	if te := in.Peek("Te"); string(te) == "trailers" {
		req.Header.Set("Te", "trailers")
	}
	var buf [64]byte
	req.Header.SetBytesV("X-Forwarded-For", peerAddr(ctx).AppendTo(buf[:0]))
	req.Header.SetBytesV("X-Forwarded-Host", host)
	if ctx.IsTLS() {
		req.Header.Set("X-Forwarded-Proto", "https")
	} else {
		req.Header.Set("X-Forwarded-Proto", "http")
	}
}

// dropVisitorHeader reports whether the visitor's header k is not
// forwarded: hop-by-hop (by nature or named by Connection), set by the
// proxy itself, a path override, or an alias of a framing header.
func dropVisitorHeader(k, connection []byte) bool {
	key := string(k) // not kept: no allocation
	switch key {
	case "Host", "Content-Length", "Expect", "Forwarded", "Te":
		return true
	}
	for _, h := range hopHeaders {
		if key == h {
			return true
		}
	}
	for _, h := range pathOverrides {
		if key == h {
			return true
		}
	}
	for _, h := range clientaddr.ForwardingHeaders {
		if key == h {
			return true
		}
	}
	if bytes.IndexByte(k, '_') >= 0 && framingAlias(key) {
		return true
	}
	return namedBy(connection, k)
}

// namedBy reports whether the Connection header value lists header k.
func namedBy(connection, k []byte) bool {
	for len(connection) > 0 {
		tok := connection
		if i := bytes.IndexByte(connection, ','); i >= 0 {
			tok, connection = connection[:i], connection[i+1:]
		} else {
			connection = nil
		}
		if bytes.EqualFold(bytes.Trim(tok, " \t"), k) {
			return true
		}
	}
	return false
}

// visitorAnswer copies the upstream's answer resp (on connection uc of
// the pool, nil on fasthttp's client) to the visitor: the
// end-to-end headers, the release header's effect, the status, and the
// body, copied when small and sized, streamed otherwise (resp is then
// released when the stream ends).
func (f *fastForwarder) visitorAnswer(ctx *fasthttp.RequestCtx, resp *fasthttp.Response, uc *upConn, a *fastAdmission) {
	out := &ctx.Response
	var cb [128]byte
	named := append(cb[:0], resp.Header.Peek("Connection")...)
	out.Header.SetNoDefaultContentType(true)
	for k, v := range resp.Header.All() {
		key := string(k)
		if key == "Content-Length" || isHop(key, nil) || namedBy(named, k) {
			continue
		}
		if key == ReleaseHeader {
			f.visitorRelease(ctx, v, a)
			continue
		}
		out.Header.AddBytesKV(k, v)
	}
	out.SetStatusCode(resp.StatusCode())
	size := resp.Header.ContentLength()
	body := resp.BodyStream()
	if body == nil || size == 0 {
		f.finish(resp, uc, true)
		return
	}
	if size > 0 && size <= maxBufferedAnswer {
		err := appendBody(out, body, size)
		f.finish(resp, uc, err == nil)
		if err != nil {
			// Nothing is sent yet: the visitor's connection is closed
			// without an answer, as the standard path cuts it, rather
			// than given a short body.
			f.h.log.Warn("upstream body cut", "upstream", f.upstream.Host, "error", err)
			ctx.HijackSetNoResponse(true)
			ctx.Hijack(func(c net.Conn) { _ = c.Close() })
		}
		return
	}
	out.SetBodyStream(&answerStream{f: f, resp: resp, uc: uc, body: body}, size)
}

// appendBody reads size bytes of body into out's body.
func appendBody(out *fasthttp.Response, body io.Reader, size int) error {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	for size > 0 {
		n, err := body.Read((*bp)[:min(size, len(*bp))])
		out.AppendBody((*bp)[:n])
		size -= n
		if err == io.EOF && size > 0 {
			return io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

// visitorRelease applies the upstream's release header v: "1" frees the
// visitor's slots at once and replaces their cookies.
func (f *fastForwarder) visitorRelease(ctx *fasthttp.RequestCtx, v []byte, a *fastAdmission) {
	if string(bytes.TrimSpace(v)) != "1" {
		return
	}
	r := &http.Request{RemoteAddr: ctx.RemoteAddr().String(), Header: http.Header{}}
	if ctx.IsTLS() {
		r.TLS = &tls.ConnectionState{}
	}
	for _, ad := range a.adm[:a.n] {
		c := ad.gate.release(context.Background(), r, ad.visitor)
		ctx.Response.Header.Add("Set-Cookie", c.String())
	}
}

// visitorFailed answers a request whose upstream failed before its
// answer began, as upstreamFailed does.
func (f *fastForwarder) visitorFailed(ctx *fasthttp.RequestCtx, err error) {
	status, msg := http.StatusBadGateway, msgBadGateway
	if isTimeout(err) {
		status, msg = http.StatusGatewayTimeout, msgGatewayTimeout
		f.h.log.Warn("upstream timed out", "upstream", f.upstream.Host, "error", err)
	} else {
		f.h.log.Warn("upstream unreachable", "upstream", f.upstream.Host, "error", err)
	}
	answerText(ctx, status, msg)
}

// answerText answers the visitor status with a text message, as
// http.Error does.
func answerText(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.Response.Reset()
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetStatusCode(status)
	ctx.SetBodyString(msg + "\n")
}

// answerStream is an upstream's body streamed to the visitor; closing it
// releases the answer it belongs to.
type answerStream struct {
	f    *fastForwarder
	resp *fasthttp.Response
	uc   *upConn
	body io.Reader
	eof  bool
}

func (s *answerStream) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	s.eof = s.eof || err == io.EOF
	return n, err
}

func (s *answerStream) Close() error {
	s.f.finish(s.resp, s.uc, s.eof)
	return nil
}
