package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/aditus-queue/aditus-queue/transport/proxy"
)

// Timeouts of the public HTTP servers. A slow client may hold a
// connection at most this long per request; WebSockets are hijacked and
// keep their own deadlines.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
)

// publicServer is an http.Server for a listener reachable by visitors:
// every timeout is set, so slow clients cannot hold connections open.
func publicServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout}
}

// proxyServer is the http.Server of the reverse proxy: slow headers and
// idle connections are cut, but no read or write deadline bounds a whole
// request, since the shop behind it may stream a large download or a
// long response through it.
func proxyServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout}
}

// httpServer is an HTTP server a listener serves: net/http's, or fasthttp's
// (fastServer).
type httpServer interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
}

// fastServer is the proxy's fasthttp server as an httpServer, serving
// proxy.FastListener's connections; its Serve returns nil once shut down.
type fastServer struct{ *fasthttp.Server }

func (s fastServer) Serve(ln net.Listener) error { return s.Server.Serve(proxy.FastListener(ln)) }

func (s fastServer) Shutdown(ctx context.Context) error { return s.ShutdownWithContext(ctx) }

// listener is one of a node's HTTP servers with its bound socket; its
// name says which in errors ("visitor", "ops", "proxy").
type listener struct {
	name string
	ln   net.Listener
	srv  httpServer
	// stop, when set, runs after the server shut down (a proxy's own
	// clean-up).
	stop func()
}

// listenerError is a listener that stopped serving on its own.
type listenerError struct {
	name, addr string
	err        error
}

func (e *listenerError) Error() string {
	return fmt.Sprintf("%s listener on %s: %v", e.name, e.addr, e.err)
}

func (e *listenerError) Unwrap() error { return e.err }

// listeners are the HTTP servers of a node, started and stopped together.
type listeners struct {
	all    []*listener
	failed chan error // the first listener that stopped on its own
}

func newListeners() *listeners { return &listeners{failed: make(chan error, 8)} }

// bind listens on addr for the listener name; the error names both.
func (ls *listeners) bind(name, addr string) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listener: listen on %s: %w", name, addr, err)
	}
	l := &listener{name: name, ln: ln}
	ls.all = append(ls.all, l)
	return l, nil
}

// serve starts l's server; a failure other than the shutdown is sent on
// Failed, naming the listener.
func (ls *listeners) serve(l *listener, srv httpServer) {
	l.srv = srv
	go func() {
		if err := srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			ls.failed <- &listenerError{name: l.name, addr: l.ln.Addr().String(), err: err}
		}
	}()
}

// Failed delivers the first listener that stopped serving.
func (ls *listeners) Failed() <-chan error { return ls.failed }

// shutdown stops accepting on every listener and waits, until ctx ends,
// for the requests in flight; listeners never served are closed.
func (ls *listeners) shutdown(ctx context.Context) {
	for _, l := range ls.all {
		if l.srv != nil {
			_ = l.srv.Shutdown(ctx)
		} else {
			_ = l.ln.Close()
		}
		if l.stop != nil {
			l.stop()
		}
	}
}

// get returns the listener called name, nil if none.
func (ls *listeners) get(name string) *listener {
	for _, l := range ls.all {
		if l.name == name {
			return l
		}
	}
	return nil
}
