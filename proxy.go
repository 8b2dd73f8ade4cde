package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/proxy"
)

// parseProxyFlags reads `proxy`'s flags: --config and --addr, and serve's
// log and cluster flags. Without --peers the proxy runs alone on the
// embedded log (or Kafka) as a member of its own; with --peers it joins the
// cluster as a front node.
func parseProxyFlags(args []string, getenv func(string) string) (*serveConfig, error) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintln(os.Stderr, "usage: aditus-queue proxy --config FILE [--addr :8080] [serve's log and cluster flags]\n\n"+
				"Without --peers the proxy runs alone on the embedded log in --data-dir; with --peers it joins the\n"+
				"cluster as a front node. Of serve's flags below, --addr is the proxy's address; --roles, --admin-token\n"+
				"and --proxy-* do not apply.")
			return parseServeFlags([]string{"--help"}, getenv)
		}
	}
	var rest []string
	config, addr := "", ":8080"
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
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

// runProxy runs `aditus-queue proxy` until ctx ends.
func runProxy(ctx context.Context, c *serveConfig) error {
	logger := newLogger(c, os.Stderr)
	slog.SetDefault(logger)
	// A bad configuration is one line, before anything starts.
	if _, err := proxy.Load(c.ProxyConfig); err != nil {
		return err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	sealer, err := openSealer(c)
	if err != nil {
		return err
	}
	var elog persistence.Log
	if c.has("actor") {
		if elog, err = openLog(ctx, c); err != nil {
			return err
		}
		defer elog.Close()
	}
	var peers []string
	for _, p := range strings.Split(c.Peers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			peers = append(peers, p)
		}
	}
	n, err := node.Start(node.Config{
		Member: c.has("actor"), Host: c.ClusterHost, Port: c.ClusterPort, AdvertisedHost: c.ClusterAdvertise,
		HealthAddr: c.ClusterHealth, Peers: peers,
		Deps: node.Deps{Log: elog, Sealer: sealer, Hash: seal.HashSecret, Logger: logger},
	})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	errc := make(chan error, 1)
	stop, err := startProxy(c.ProxyConfig, c.ProxyAddr, c.PublicURL, n, sealer, logger, errc)
	if err != nil {
		n.Stop(context.Background())
		return err
	}
	var failed error
	select {
	case <-ctx.Done():
	case failed = <-errc:
	case <-n.Failed():
		failed = n.FailedErr()
	}
	logger.Info("shutting down")
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	n.Stop(sctx)
	return failed
}

// startProxy loads the configuration and serves the reverse proxy on addr
// in front of node n's capacity grains; blocks naming a rate room send
// visitors to its page under publicURL. A failure of the listener is sent
// on errc; stop shuts the proxy down gracefully.
func startProxy(path, addr, publicURL string, n *node.Node, sealer *seal.Sealer, logger *slog.Logger, errc chan<- error) (stop func(), err error) {
	cfg, err := proxy.Load(path)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("proxy: listen on %s: %w", addr, err)
	}
	h, err := proxy.New(cfg, proxy.Options{Store: proxy.ClusterStore{Client: n.Client, Opener: sealer}, Logger: logger,
		RateRooms: proxy.ClusterRateRooms{Views: n.Views}, PublicURL: publicURL})
	if err != nil {
		ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("proxy: %w", err)
		}
	}()
	logger.Info("aditus-queue proxy serving", "addr", ln.Addr().String(), "config", path, "cluster", n.Address())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		h.Close()
	}, nil
}
