package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// VisitorServer is the server the proxy faces visitors with.
type VisitorServer int

const (
	// VisitorFast is fasthttp's server (the default).
	VisitorFast VisitorServer = iota
	// VisitorStd is net/http's server.
	VisitorStd
)

// ParseVisitorServer reads --visitor-server: "fast" or "std".
func ParseVisitorServer(s string) (VisitorServer, error) {
	switch s {
	case "fast", "":
		return VisitorFast, nil
	case "std":
		return VisitorStd, nil
	}
	return 0, fmt.Errorf("visitor server %q: want fast or std", s)
}

// The fast visitor server's limits, each bounded.
const (
	// fastHeaderLimit is the largest request line and header block (the
	// read buffer of each connection being read).
	fastHeaderLimit = 128 << 10
	// fastConcurrency bounds the connections served at once; past it a
	// new connection is answered 503 and closed.
	fastConcurrency = 16 << 10
	// fastBodyBuffered is the largest request body: the server reads it
	// whole before the handler runs (nginx's client_max_body_size
	// default); a larger one is answered 413.
	fastBodyBuffered = 1 << 20
	fastReadHeader   = 10 * time.Second
	fastIdle         = 120 * time.Second
)

// FastServer is fasthttp's server serving h to visitors: the requests
// admitted from the cookie alone on fasthttp's types (admitFast), every
// other through ServeHTTP; framing it reads more leniently than the
// standard server is refused first (refuseFraming).
func (h *Handler) FastServer() *fasthttp.Server {
	return fastServer(func() *Handler { return h }, h)
}

// FastServer is fasthttp's server serving the handler in force.
func (r *Reloadable) FastServer() *fasthttp.Server { return fastServer(r.Handler, r) }

// fastServer serves cur's handler in force (admitFast) and, for what it
// does not take, std.
func fastServer(cur func() *Handler, std http.Handler) *fasthttp.Server {
	slow := fasthttpadaptor.NewFastHTTPHandler(adapted(std))
	h := cur()
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			h := cur()
			defer h.recoverFast(ctx)
			if refuseFraming(ctx) || h.admitFast(ctx) {
				return
			}
			slow(ctx)
		},
		ErrorHandler:                 fastError,
		Logger:                       fastLogger{h.log},
		SecureErrorLogMessage:        true,
		NoDefaultServerHeader:        true,
		NoDefaultContentType:         true,
		DisablePreParseMultipartForm: true,
		ReadBufferSize:               fastHeaderLimit,
		Concurrency:                  fastConcurrency,
		MaxRequestBodySize:           fastBodyBuffered,
		IdleTimeout:                  fastIdle,
		ReadTimeout:                  fastReadHeader,
		CloseOnShutdown:              true,
		// An idle connection holds no read buffer (128 KB each
		// otherwise), for about 1 µs a request.
		ReduceMemoryUsage: true,
	}
	h.fastSrv.Store(s)
	return s
}

// recoverFast turns a panic while serving ctx into a 500 and the
// connection's end, as net/http's server does, rather than the process's
// end (fasthttp's server recovers nothing).
func (h *Handler) recoverFast(ctx *fasthttp.RequestCtx) {
	rec := recover()
	if rec == nil {
		return
	}
	h.log.Error("panic serving a visitor", "panic", rec, "path", string(ctx.Path()))
	answerText(ctx, http.StatusInternalServerError, "Internal server error.")
	ctx.SetConnectionClose()
}

// fastError answers a request fasthttp's parser refused: 431 for a
// request line or header block over the limit, 413 for a body over it,
// 501 for a transfer coding other than chunked alone, 400 otherwise; the
// connection then closes.
func fastError(ctx *fasthttp.RequestCtx, err error) {
	status, msg := http.StatusBadRequest, "Bad request: the request could not be read."
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &small):
		status, msg = http.StatusRequestHeaderFieldsTooLarge, "Request header fields too large."
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status, msg = http.StatusRequestEntityTooLarge, "Request entity too large."
	case errors.Is(err, errBareLF):
		msg = "Bad request: header lines must end in CRLF."
	case strings.Contains(err.Error(), "transfer-encoding"):
		// The parser names no error type for these: a coding other than
		// chunked alone, or Transfer-Encoding twice or on HTTP/1.0.
		status, msg = http.StatusNotImplemented, "Not implemented: unsupported transfer encoding."
	}
	answerText(ctx, status, msg)
	ctx.SetConnectionClose()
}

// refuseFraming answers what fasthttp's parser lets through and the
// standard server refuses: a protocol version other than HTTP/1.0 and
// 1.1 (505), a header name that is not a token or a value with a control
// character, a malformed percent-encoding in the target (400), and the
// asterisk-form target, which only OPTIONS may
// use (answered 200 with no body, as the standard server does).
func refuseFraming(ctx *fasthttp.RequestCtx) bool {
	hdr := &ctx.Request.Header
	switch string(hdr.Protocol()) {
	case "HTTP/1.1", "HTTP/1.0":
	default:
		answerText(ctx, http.StatusHTTPVersionNotSupported, "HTTP version not supported.")
		ctx.SetConnectionClose()
		return true
	}
	for k, v := range hdr.All() {
		if !validName(k) || !validValue(v) {
			answerText(ctx, http.StatusBadRequest, "Bad request: a header's name or value is malformed.")
			ctx.SetConnectionClose()
			return true
		}
	}
	uri := hdr.RequestURI()
	if !validEscapes(uri) {
		answerText(ctx, http.StatusBadRequest, "Bad request: the request target has a malformed percent-encoding.")
		return true
	}
	if string(uri) != "*" {
		return false
	}
	if hdr.IsOptions() {
		ctx.Response.Header.SetContentLength(0)
		return true
	}
	answerText(ctx, http.StatusBadRequest, "Bad request: this address has no canonical form (does not start with /).")
	return true
}

// tokenChar are the bytes of a token: tchar in RFC 9110 section 5.6.2.
var tokenChar = func() (t [256]bool) {
	for _, c := range []byte("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t[c] = true
	}
	return t
}()

// validEscapes reports whether every '%' of the request target begins a
// percent-encoded byte, as net/http's parser requires.
func validEscapes(uri []byte) bool {
	for i := 0; i < len(uri); i++ {
		if uri[i] != '%' {
			continue
		}
		if i+2 >= len(uri) || !isHexDigit(uri[i+1]) || !isHexDigit(uri[i+2]) {
			return false
		}
		i += 2
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validName reports whether k is a token (RFC 9110 section 5.6.2).
func validName(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !tokenChar[c] {
			return false
		}
	}
	return true
}

// validValue reports whether v has no control character but tab.
func validValue(v []byte) bool {
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// fastLogger passes fasthttp's messages (a visitor's malformed request,
// a connection cut) to the proxy's log at debug level: a visitor can
// cause them at will.
type fastLogger struct{ log *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug("visitor connection", "detail", fmt.Sprintf(format, args...))
	}
}

// flushAfter is how much of an answer the standard path may hand the
// fast server before it is streamed: fasthttpadaptor holds an answer
// that is not flushed whole in memory.
const flushAfter = 64 << 10

// adapted is h as fasthttpadaptor runs it, on a request of its own:
// the adaptor's request points into fasthttp's buffers and context, which
// the server reuses once the handler returns, while the standard client's
// goroutines may still read them; the copy has its own strings, body and
// a context that ends when the handler returns, carrying a server as
// net/http's requests do (so that ReverseProxy cuts the visitor's
// connection when an upstream's body breaks off rather than end a short
// answer cleanly). Answers past flushAfter are streamed.
func adapted(h http.Handler) http.Handler {
	srv := &http.Server{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), http.ServerContextKey, srv))
		defer cancel()
		r2, err := ownRequest(r.WithContext(ctx))
		if err != nil {
			http.Error(w, "Bad request: the request's body could not be read.", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(&flushingWriter{ResponseWriter: w}, r2)
	})
}

// ownRequest gives r (a shallow copy) strings, a URL, headers and a body
// of its own.
func ownRequest(r *http.Request) (*http.Request, error) {
	r.Method, r.Proto, r.Host = strings.Clone(r.Method), strings.Clone(r.Proto), strings.Clone(r.Host)
	r.RequestURI, r.RemoteAddr = strings.Clone(r.RequestURI), strings.Clone(r.RemoteAddr)
	u := *r.URL
	u.Scheme, u.Opaque, u.Host, u.Path = strings.Clone(u.Scheme), strings.Clone(u.Opaque), strings.Clone(u.Host), strings.Clone(u.Path)
	u.RawPath, u.RawQuery, u.Fragment = strings.Clone(u.RawPath), strings.Clone(u.RawQuery), strings.Clone(u.Fragment)
	r.URL = &u
	hdr := make(http.Header, len(r.Header))
	for k, vv := range r.Header {
		own := make([]string, len(vv))
		for i, v := range vv {
			own[i] = strings.Clone(v)
		}
		hdr[strings.Clone(k)] = own
	}
	r.Header = hdr
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		r.Body = http.NoBody
		return r, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r, nil
}

// flushingWriter flushes every write once flushAfter bytes went through.
type flushingWriter struct {
	http.ResponseWriter
	n int
}

func (w *flushingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if w.n += n; w.n > flushAfter && err == nil {
		w.Flush()
	}
	return n, err
}

func (w *flushingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the adaptor's Hijack.
func (w *flushingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
