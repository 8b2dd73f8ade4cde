package proxy

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// The framing rule: the proxy never passes on the visitor's framing. The
// visitor server parses each request (refusing what it cannot frame
// without doubt); the proxy forwards the method, target, end-to-end
// headers and body with a Content-Length or chunking of its own, exactly
// one Host, and no hop-by-hop header, so that the upstream's parser, which
// may read HTTP its own way, never meets the visitor's bytes as they came.

// closeIfUnsure asks the visitor server to close the connection after
// answering a request whose framing RFC 9112 (section 6.1) says must not
// be trusted for the next one: a chunked body, which may have come with a
// Content-Length the server dropped, and HTTP/1.0, whose Transfer-Encoding
// the server ignores without a trace. Whatever followed on the connection
// is then never read as a request of its own.
func closeIfUnsure(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength < 0 || len(r.TransferEncoding) > 0 || !r.ProtoAtLeast(1, 1) {
		w.Header().Set("Connection", "close")
	}
}

// framingAlias reports whether the request header k is not a framing or
// hop-by-hop header but reads as one to a server that takes "_" for "-"
// (CGI-style environments do: Content_Length and Content-Length both
// become HTTP_CONTENT_LENGTH); so do the forwarding headers' look-alikes,
// which would let a visitor speak for the proxy. Such headers are not
// forwarded.
func framingAlias(k string) bool {
	if !strings.Contains(k, "_") {
		return false
	}
	f := http.CanonicalHeaderKey(strings.ReplaceAll(k, "_", "-"))
	return f == "Content-Length" || f == "Host" || isHop(f, nil) || slices.Contains(clientaddr.ForwardingHeaders, f)
}

// visitorBody is the visitor's request body on its way upstream. An
// error reading it (a malformed chunk, a visitor gone) comes out as a
// bodyError, so that whichever client failed on it, the failure is known
// as the visitor's rather than the upstream's.
type visitorBody struct {
	io.ReadCloser
	// failed is set by the client's writer, which may still run when
	// the forwarding fails for another reason.
	failed atomic.Bool
}

// bodyError is an error reading the visitor's body.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "reading the request body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

func (b *visitorBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.failed.Store(true)
		err = &bodyError{err}
	}
	return n, err
}

// framed is next, the forwarding on either client, with r's body, if
// any, in a visitorBody, without the headers framingAlias names, and
// without a protocol upgrade other than WebSocket's: after a 101 answer
// the visitor connection is a tunnel to the upstream, and an upgrade to
// h2c would let the visitor send the upstream any request over it, none of
// them seen by the gate. Without its Upgrade header the request is an
// ordinary one.
func framed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			if framingAlias(k) {
				delete(r.Header, k)
			}
		}
		if isUpgrade(r) && !isWebSocket(r) {
			r.Header.Del("Upgrade")
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &visitorBody{ReadCloser: r.Body}
		}
		next.ServeHTTP(w, r)
	})
}

// badBody reports whether the forwarding of r failed with err because
// reading r's body failed: the request cannot be forwarded whole,
// whatever the upstream did with its start.
func badBody(r *http.Request, err error) bool {
	if b, ok := r.Body.(*visitorBody); ok && b.failed.Load() {
		return true
	}
	var be *bodyError
	return errors.As(err, &be)
}

// isWebSocket reports whether r's Upgrade asks for WebSocket alone.
func isWebSocket(r *http.Request) bool {
	u := r.Header["Upgrade"]
	return len(u) == 1 && strings.EqualFold(strings.TrimSpace(u[0]), "websocket")
}
