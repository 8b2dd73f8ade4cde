package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"time"
)

// Forwarding is the path by which admitted requests reach an upstream.
type Forwarding int

const (
	// ForwardFast sends requests over pooled keep-alive connections with
	// fasthttp's client and streams both bodies (the default).
	ForwardFast Forwarding = iota
	// ForwardStd sends them through net/http/httputil.ReverseProxy.
	ForwardStd
)

// ParseForwarding reads --upstream-client: "fast" or "std".
func ParseForwarding(s string) (Forwarding, error) {
	switch s {
	case "fast", "":
		return ForwardFast, nil
	case "std":
		return ForwardStd, nil
	}
	return 0, fmt.Errorf("upstream client %q: want fast or std", s)
}

// DefaultUpstreamTimeout bounds connecting to an upstream, waiting for its
// answer's headers, and the silence between two reads or writes of a body
// (nginx's proxy_*_timeout default).
const DefaultUpstreamTimeout = 60 * time.Second

// hopHeaders are meaningful for one connection only and never forwarded
// (RFC 9110 section 7.6.1), besides the headers Connection names.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// isHop reports whether the canonical header key is hop-by-hop, either by
// nature or because a Connection header (connection, canonical values
// already split) names it.
func isHop(key string, connection []string) bool {
	for _, h := range hopHeaders {
		if key == h {
			return true
		}
	}
	for _, c := range connection {
		if strings.EqualFold(c, key) {
			return true
		}
	}
	return false
}

// connectionTokens are the header names a Connection header lists.
func connectionTokens(values []string) []string {
	var out []string
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if t = textproto.TrimString(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// isUpgrade reports whether r asks to switch protocols (WebSocket).
func isUpgrade(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, t := range connectionTokens(r.Header["Connection"]) {
		if strings.EqualFold(t, "upgrade") {
			return true
		}
	}
	return false
}

// isTimeout reports whether err is an upstream that took too long.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &te) && te.Timeout())
}

// upstreamFailed answers a request whose upstream failed before its
// answer began: 400 and the connection closed when it was the visitor's
// body that failed, 504 when the upstream took too long, 502 otherwise.
func (h *Handler) upstreamFailed(w http.ResponseWriter, r *http.Request, upstream *url.URL, err error) {
	if badBody(r, err) {
		w.Header().Set("Connection", "close")
		http.Error(w, "Bad request: the request's body could not be read.", http.StatusBadRequest)
		return
	}
	if isTimeout(err) {
		h.log.Warn("upstream timed out", "upstream", upstream.Host, "error", err)
		http.Error(w, msgGatewayTimeout, http.StatusGatewayTimeout)
		return
	}
	h.log.Warn("upstream unreachable", "upstream", upstream.Host, "error", err)
	http.Error(w, msgBadGateway, http.StatusBadGateway)
}

// The answers to a request whose upstream failed.
const (
	msgGatewayTimeout = "Gateway timeout: the site behind this proxy took too long to answer."
	msgBadGateway     = "Bad gateway: the site behind this proxy did not answer."
)

// forwarder is the handler that sends a location's requests to upstream
// on the path o chooses, through framed, and, on fasthttp's client with
// an upstream URL that joins nothing, the fast visitor server's
// forwarding of the requests it admits itself (nil otherwise).
func (h *Handler) forwarder(upstream *url.URL, fr *front, o Options) (http.Handler, fastForward) {
	std := h.stdForwarder(upstream, fr, o)
	if o.Forwarding == ForwardStd {
		return framed(std), nil
	}
	ff := newFastForwarder(h, upstream, fr, o, std)
	if ff.joins {
		return framed(ff), nil
	}
	return framed(ff), ff
}

// stdForwarder is httputil.ReverseProxy with the front's rewrite, the
// release header and the proxy's 502/504 answers.
func (h *Handler) stdForwarder(upstream *url.URL, fr *front, o Options) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { fr.rewrite(pr, upstream) },
		Transport:      o.Transport,
		ModifyResponse: h.modifyResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.upstreamFailed(w, r, upstream, err)
		},
	}
}

// stdTransport is UpstreamTransport bounded by timeout (to connect and
// for the answer's headers), verifying https upstreams with tlsConfig
// when set.
func stdTransport(timeout time.Duration, tlsConfig *tls.Config) *http.Transport {
	t := UpstreamTransport()
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig.Clone()
	}
	t.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = timeout
	return t
}
