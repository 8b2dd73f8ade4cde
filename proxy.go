package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/proxy"
)

// parseProxyFlags reads `proxy`'s flags: --config and --addr, and serve's
// log and cluster flags. Without --peers the proxy runs alone on the
// embedded log (or Kafka) as a member of its own; with --peers it joins the
// cluster as a front node.
func parseProxyFlags(args []string, getenv func(string) string) (*serveConfig, error) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintln(os.Stderr, "usage: aditus-queue proxy --config FILE [--addr :8080] [--visitor-server fast|std] [--upstream-client fast|std]\n"+
				"       [--upstream-timeout 60s]\n"+
				"       [serve's log and cluster flags]\n\n"+
				"Without --peers the proxy runs alone on the embedded log in --data-dir; with --peers it joins the\n"+
				"cluster as a front node. Of serve's flags below, --addr is the proxy's address; --visitor-server,\n"+
				"--upstream-client and --upstream-timeout are --proxy-visitor-server, --proxy-upstream-client and\n"+
				"--proxy-upstream-timeout; --roles, --admin-token\n"+
				"and the other --proxy-* do not apply.")
			return parseServeFlags([]string{"--help"}, getenv)
		}
	}
	var rest []string
	config, addr := "", ":8080"
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "upstream-client" || name == "upstream-timeout" || name == "visitor-server") {
			// The proxy's own names for serve's --proxy-upstream-*.
			rest = append(rest, "--proxy-"+strings.TrimLeft(a, "-"))
			continue
		}
		if !strings.HasPrefix(a, "-") || (name != "config" && name != "addr") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: -%s", name)
			}
			i++
			val = args[i]
		}
		if name == "config" {
			config = val
		} else {
			addr = val
		}
	}
	c, err := parseServeFlags(rest, getenv)
	if err != nil {
		return nil, err
	}
	if config == "" {
		return nil, errors.New("--config FILE is required (the HCL file of hosts and waiting rooms)")
	}
	c.ProxyConfig, c.ProxyAddr = config, addr
	if c.Peers != "" {
		c.Roles = "front"
	} else {
		c.Roles = "actor"
	}
	return c, nil
}

// runProxy runs `aditus-queue proxy` until ctx ends or a listener fails,
// with the same start-up and ordered shutdown as serve (bootstrap): the
// proxy listener, the operations listener, the node.
func runProxy(ctx context.Context, c *serveConfig) error {
	// A bad configuration is one line, before anything starts.
	if _, err := proxy.Load(c.ProxyConfig); err != nil {
		return err
	}
	b, err := begin(c, "ops", c.OpsAddr)
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.startNode(ctx); err != nil {
		return err
	}
	if err := startProxy(b, c); err != nil {
		return err
	}
	ops := b.ls.get("ops")
	serveOps(b.ls, ops, opsOnly(b))
	b.logger.Info("operations listener serving", "addr", ops.ln.Addr().String())
	failed := b.wait(ctx)
	b.stop(nil)
	return failed
}

// opsOnly is the operations handler of a node without the HTTP API: the
// metrics and the probe, as serve's (api.Health).
func opsOnly(b *bootstrap) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(b.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /queue/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(api.Health(b.node.Views))
	})
	return mux
}

// startProxy loads the configuration and serves the reverse proxy on
// c.ProxyAddr in front of b's node's capacity grains, as the listener
// "proxy"; blocks naming a rate room send visitors to its page under the
// public URL.
func startProxy(b *bootstrap, c *serveConfig) error {
	path, addr := c.ProxyConfig, c.ProxyAddr
	fw, err := proxy.ParseForwarding(c.ProxyUpstreamClient)
	if err != nil {
		return err
	}
	vs, err := proxy.ParseVisitorServer(c.ProxyVisitorServer)
	if err != nil {
		return err
	}
	l, err := b.ls.bind("proxy", addr)
	if err != nil {
		return err
	}
	n := b.node
	h, err := proxy.NewReloadable(path, proxy.Options{Store: proxy.ClusterStore{Client: n.Client, Opener: b.sealer}, Logger: b.logger,
		RateRooms: proxy.ClusterRateRooms{Views: n.Views}, PublicURL: b.publicURL,
		Forwarding: fw, UpstreamTimeout: c.ProxyUpstreamTimeout, Node: n.Address()})
	if err != nil {
		return err
	}
	if err := b.reg.Register(h.Collector()); err != nil {
		h.Close()
		return fmt.Errorf("proxy metrics: %w", err)
	}
	stopHUP := reloadOnHUP(h)
	l.stop = func() {
		stopHUP()
		h.Close()
	}
	if vs == proxy.VisitorFast {
		b.ls.serve(l, fastServer{h.FastServer()})
	} else {
		b.ls.serve(l, proxyServer(h))
	}
	b.logger.Info("aditus-queue proxy serving", "addr", l.ln.Addr().String(), "config", path, "cluster", n.Address())
	return nil
}

// reloadOnHUP reloads h's file at every SIGHUP until the returned stop.
func reloadOnHUP(h *proxy.Reloadable) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				_ = h.Reload() // logged and counted; the configuration in force stays on failure
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}
