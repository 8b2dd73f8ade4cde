package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/aditus-queue/aditus-queue/actors/beacon"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/health"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/internal/gcfloor"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// shutdownLimit bounds the whole ordered shutdown of a node.
const shutdownLimit = 15 * time.Second

// bootstrap is the start-up that serve and proxy share: logger, data
// directory, listeners bound first, master key, event log, metrics and
// the node itself; and the shutdown in order (stop accepting and drain,
// then the caller's own parts, then the grains' final checkpoints, then
// the log).
type bootstrap struct {
	c         *serveConfig
	logger    *slog.Logger
	publicURL string // without a trailing slash
	sealer    *seal.Sealer
	reg       *prometheus.Registry
	guard     *health.Guard
	ls        *listeners
	elog      persistence.Log
	node      *node.Node
	roomGuard func() error // refuses new rooms while the embedded log's disk is short of space
	beacon    *beacon.Client
	gcFloor   *gcfloor.Floor
	stopped   bool
}

// begin sets up logging and the data directory and binds the listeners
// named in binds (name, address pairs) before anything else starts, so a
// busy port is one clear line. close undoes it on every error path.
func begin(c *serveConfig, binds ...string) (*bootstrap, error) {
	b := &bootstrap{c: c, logger: newLogger(c, os.Stderr), publicURL: strings.TrimRight(c.PublicURL, "/"), ls: newListeners(),
		reg: prometheus.NewRegistry(), guard: &health.Guard{AllowPrivate: c.AllowPrivateHealthURLs}}
	slog.SetDefault(b.logger)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	for i := 0; i+1 < len(binds); i += 2 {
		if _, err := b.ls.bind(binds[i], binds[i+1]); err != nil {
			b.close()
			return nil, err
		}
	}
	b.gcFloor = startGCFloor(c.GCHeapFloor, os.Getenv("GOGC"), b.logger)
	var err error
	if b.sealer, err = openSealer(c); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// peers splits --peers, dropping empty entries.
func (c *serveConfig) peers() []string {
	var out []string
	for _, p := range strings.Split(c.Peers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// startNode opens the event log (role actor) and starts the node with
// every dependency, metrics included.
func (b *bootstrap) startNode(ctx context.Context) error {
	c := b.c
	if c.has("actor") {
		var err error
		if b.elog, err = openLog(ctx, c); err != nil {
			return err
		}
	}
	b.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if fl, ok := b.elog.(*filelog.Log); ok {
		diskGauges(b.reg, fl)
		b.roomGuard = freeSpaceGuard(fl, c.MinFreeDisk)
		for stream, why := range fl.Damaged() {
			b.logger.Error("stream damaged: its room is not served until restored (aditus-queue log verify names the damage)", "stream", stream, "reason", why)
		}
	}
	actorLog := b.logger.With("component", "protoactor")
	if c.LogLevel != "debug" {
		actorLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})).With("component", "protoactor")
	}
	deps := grain.Deps{Log: b.elog, Sealer: b.sealer, Hash: seal.HashSecret, Logger: b.logger, Metrics: grain.NewMetrics(b.reg),
		WriteQueue: c.RoomWriteQueue, LoadTests: grain.LoadTestDeps{BaseURL: loadTestBase(b.publicURL, c.Addr)}, Health: health.NewHTTP(b.guard),
		BeaconWait: time.Duration(c.BeaconWaitSeconds) * time.Second}
	if err := b.openBeacon(ctx, c.BeaconURL, &deps); err != nil {
		return err
	}
	n, err := node.Start(node.Config{
		Member: c.has("actor"), Host: c.ClusterHost, Port: c.ClusterPort, AdvertisedHost: c.ClusterAdvertise,
		HealthAddr: c.ClusterHealth, Peers: c.peers(), ActorLogger: actorLog, Deps: deps,
	})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	b.node = n
	return nil
}

// wait blocks until ctx ends (nil), a listener stops serving or the node
// leaves the cluster (the reason).
func (b *bootstrap) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-b.ls.Failed():
		b.logger.Error("a listener failed; shutting the node down", "error", err)
		return err
	case <-b.node.Failed():
		err := b.node.FailedErr()
		b.logger.Error("leaving the cluster", "error", err)
		return err
	}
}

// stop shuts the node down in order: every listener stops accepting and
// drains its requests, then parts (sockets, reporters) close, then the
// grains write their final checkpoints as the node leaves, then the log
// flushes and closes.
func (b *bootstrap) stop(parts func(ctx context.Context)) {
	b.logger.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), shutdownLimit)
	defer cancel()
	b.ls.shutdown(ctx)
	if parts != nil {
		parts(ctx)
	}
	if b.node != nil {
		b.node.Stop(ctx)
	}
	b.stopped = true
	b.closeBeacon()
	b.closeLog()
	if b.gcFloor != nil {
		b.gcFloor.Stop()
	}
}

// startGCFloor keeps the collector's heap goal at floor bytes while the
// live heap is small, unless floor is 0 or the operator set GOGC.
func startGCFloor(floor int64, gogc string, logger *slog.Logger) *gcfloor.Floor {
	switch {
	case floor <= 0:
		return nil
	case gogc != "":
		logger.Info("GOGC is set: --gc-heap-floor is off", "GOGC", gogc)
		return nil
	}
	return gcfloor.Start(uint64(floor))
}

// close releases what begin and startNode took, on an error path before
// stop: the node leaves, listeners close, the log closes.
func (b *bootstrap) close() {
	if b.stopped {
		return
	}
	b.stopped = true
	if b.node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownLimit)
		b.node.Stop(ctx)
		cancel()
	}
	for _, l := range b.ls.all {
		_ = l.ln.Close()
	}
	b.closeBeacon()
	b.closeLog()
}

func (b *bootstrap) closeLog() {
	if b.elog != nil {
		if err := b.elog.Close(); err != nil {
			b.logger.Error("closing the event log", "error", err)
		}
		b.elog = nil
	}
}

// openBeacon reads and checks the drand chain at url (nothing without one).
// A URL the relay says is wrong keeps the node from starting; a relay that
// cannot be reached does not: the node starts, draws use the key alone
// until the chain is read in the background, and
// aditus_queue_beacon_chain_known says which it is.
func (b *bootstrap) openBeacon(ctx context.Context, url string, deps *grain.Deps) error {
	if url == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cl, err := beacon.Dial(ctx, url, beacon.DefaultBackoff, deps.Logger)
	if err != nil {
		return fmt.Errorf("--beacon-url: %w", err)
	}
	b.beacon, deps.Beacon = cl, cl
	b.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aditus_queue_beacon_chain_known",
		Help: "1 when the drand chain of --beacon-url was read and checked, 0 while its relay could not be reached (draws use the key alone)"},
		func() float64 {
			if cl.Chain() == nil {
				return 0
			}
			return 1
		}))
	if ch := cl.Chain(); ch != nil {
		deps.Logger.Info("draws mix in a drand beacon", "chain", hex.EncodeToString(ch.Hash), "scheme", ch.Scheme, "period", ch.PeriodSeconds)
	}
	return nil
}

// loadTestBase is where this node's load tests send their visitors: the
// public URL, or without one this node's own listener on loopback.
func loadTestBase(publicURL, addr string) string {
	if publicURL != "" {
		return publicURL
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// closeBeacon stops reading the beacon's chain in the background, if it
// still runs.
func (b *bootstrap) closeBeacon() {
	if b.beacon != nil {
		b.beacon.Close()
		b.beacon = nil
	}
}
