package main

import (
	"net"
	"net/http"
	"net/http/pprof"
)

// loopback reports whether hostport names a loopback host, so that the
// profiling endpoint is never reachable from outside the machine.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveOps serves the operations listener l: ops (/metrics,
// /queue/healthz) and, when l is bound to loopback, net/http/pprof under
// /debug/pprof/. Bound elsewhere (for a scraper on the cluster network),
// it serves no profiles. Its timeouts are those of the public servers,
// except the write timeout with profiles on: a CPU profile or trace runs
// for its ?seconds=.
func serveOps(ls *listeners, l *listener, ops *http.ServeMux) {
	srv := publicServer(ops)
	if loopback(l.ln.Addr().String()) {
		ops.HandleFunc("/debug/pprof/", pprof.Index)
		ops.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		ops.HandleFunc("/debug/pprof/profile", pprof.Profile)
		ops.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		ops.HandleFunc("/debug/pprof/trace", pprof.Trace)
		srv.WriteTimeout = 0
	}
	ls.serve(l, srv)
}
