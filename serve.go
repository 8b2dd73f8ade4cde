package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/aditus-queue/aditus-queue/actors/health"
	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/dashboard"
	"github.com/aditus-queue/aditus-queue/dashboard/instances"
	"github.com/aditus-queue/aditus-queue/dashboard/live"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/kafkalog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

var errHelp = errors.New("help")

// maxRoomWriteQueue bounds --room-write-queue: a queued redemption holds a
// few hundred bytes, an operator's change up to its 64 KiB body.
const maxRoomWriteQueue = 100_000

// serveConfig is everything `serve` is told by flags and environment.
type serveConfig struct {
	Addr, PublicURL, DataDir, Log, KafkaBrokers, AdminToken, Roles string
	KafkaEventsTopic, KafkaSnapshotsTopic                          string
	LogFormat, LogLevel, MasterKey, PprofAddr                      string
	ClusterHost, ClusterAdvertise, ClusterHealth, Peers            string
	ClusterPort, KafkaPartitions, KafkaReplication                 int
	LoadTestMaxRate, LoadTestMaxSeconds                            int
	// RoomWriteQueue bounds each room's queue of writes asked for by
	// callers (bypass codes, changes); beyond it they are answered busy.
	RoomWriteQueue int
	// AllowPrivateHealthURLs lets autoRate health URLs reach loopback and
	// private addresses (tests, shops on a private network).
	AllowPrivateHealthURLs bool
	ProxyConfig, ProxyAddr string
}

// parseServeFlags reads flags; each has an environment twin (AQ_ + the
// flag in upper snake case), and flags win.
func parseServeFlags(args []string, getenv func(string) string) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	// A bad flag is one clear line (printed by main); --help prints all.
	fs.SetOutput(io.Discard)
	str := func(p *string, name, def, usage string) {
		if v := getenv(envName(name)); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" (env "+envName(name)+")")
	}
	num := func(p *int, name string, def int, usage string) {
		if v := getenv(envName(name)); v != "" {
			fmt.Sscan(v, &def)
		}
		fs.IntVar(p, name, def, usage+" (env "+envName(name)+")")
	}
	str(&c.Addr, "addr", ":8080", "HTTP listen address")
	str(&c.PublicURL, "public-url", "http://localhost:8080", "base of the links the server hands out")
	str(&c.DataDir, "data-dir", "./data", "embedded log and master key")
	str(&c.Log, "log", "file", "event log: file (embedded, one node) or kafka")
	str(&c.KafkaBrokers, "kafka-brokers", "", "comma-separated host:port of the Kafka brokers")
	num(&c.KafkaPartitions, "kafka-partitions", 8, "partitions of the events topic when it is created")
	num(&c.KafkaReplication, "kafka-replication", 1, "replication factor of the topics when they are created")
	str(&c.KafkaEventsTopic, "kafka-events-topic", "aditus-queue.events", "Kafka topic of the rooms' events; every member of a cluster needs the same")
	str(&c.KafkaSnapshotsTopic, "kafka-snapshots-topic", "aditus-queue.snapshots", "compacted Kafka topic of the rooms' snapshots")
	str(&c.AdminToken, "admin-token", "", "the operator's bearer token (default: generated and printed once on first start)")
	str(&c.Roles, "roles", "front,actor", "roles of this node: front, actor or both")
	str(&c.MasterKey, "master-key", "", "64 hex chars or base64 master key sealing secrets (default: <data-dir>/master.key); every node of a cluster needs the same")
	str(&c.LogFormat, "log-format", "text", "log format: text or json")
	str(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	str(&c.PprofAddr, "pprof-addr", "", "loopback host:port serving net/http/pprof for profiling (default: off)")
	str(&c.ClusterHost, "cluster-host", "127.0.0.1", "address the cluster endpoint binds")
	num(&c.ClusterPort, "cluster-port", 0, "port of the cluster endpoint (0: any free port)")
	str(&c.ClusterAdvertise, "cluster-advertise", "", "address other members dial (default: cluster-host)")
	str(&c.ClusterHealth, "cluster-health", "", "host:port of this member's cluster health endpoint (default: cluster-host, any port)")
	str(&c.Peers, "peers", "", "comma-separated cluster health addresses of every member (default: this node alone)")
	num(&c.LoadTestMaxRate, "loadtest-max-rate", 5000, "most requests per second a load test may send")
	num(&c.LoadTestMaxSeconds, "loadtest-max-seconds", 600, "longest a load test may last, in seconds")
	num(&c.RoomWriteQueue, "room-write-queue", node.DefaultWriteQueue, "most bypass-code redemptions and changes a room queues for its log; beyond it they are answered 503 busy")
	allowPrivate := getenv(envName("allow-private-health-urls"))
	fs.BoolVar(&c.AllowPrivateHealthURLs, "allow-private-health-urls", allowPrivate == "1" || strings.EqualFold(allowPrivate, "true"),
		"let autoRate health URLs reach loopback, private and link-local addresses (env "+envName("allow-private-health-urls")+")")
	str(&c.ProxyConfig, "proxy-config", "", "HCL file of capacity rooms: also run the enforcing reverse proxy (see aditus-queue proxy)")
	str(&c.ProxyAddr, "proxy-addr", ":8081", "listen address of the reverse proxy with --proxy-config")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(os.Stderr)
			fmt.Fprintln(os.Stderr, "usage: aditus-queue serve [flags]")
			fs.PrintDefaults()
			return nil, errHelp
		}
		return nil, fmt.Errorf("%w (see aditus-queue serve --help)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch c.Log {
	case "file":
	case "kafka":
		if c.KafkaBrokers == "" {
			return nil, errors.New("--log kafka needs --kafka-brokers")
		}
	default:
		return nil, fmt.Errorf("--log must be file or kafka, not %q", c.Log)
	}
	for _, r := range strings.Split(c.Roles, ",") {
		if r = strings.TrimSpace(r); r != "front" && r != "actor" {
			return nil, fmt.Errorf("--roles: unknown role %q (front, actor)", r)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return nil, fmt.Errorf("--log-format must be text or json")
	}
	if c.LoadTestMaxRate < 1 || c.LoadTestMaxRate > load.MaxRate {
		return nil, fmt.Errorf("--loadtest-max-rate must be 1–%d", load.MaxRate)
	}
	if c.LoadTestMaxSeconds < 1 || c.LoadTestMaxSeconds > int(load.MaxDuration/time.Second) {
		return nil, fmt.Errorf("--loadtest-max-seconds must be 1–%d", int(load.MaxDuration/time.Second))
	}
	if c.RoomWriteQueue < 1 || c.RoomWriteQueue > maxRoomWriteQueue {
		return nil, fmt.Errorf("--room-write-queue must be 1–%d", maxRoomWriteQueue)
	}
	if c.PprofAddr != "" && !loopback(c.PprofAddr) {
		return nil, fmt.Errorf("--pprof-addr %q: want a loopback address such as 127.0.0.1:6060", c.PprofAddr)
	}
	return c, nil
}

func envName(flagName string) string {
	return "AQ_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// roles lists this node's roles, as the instances endpoint shows them.
func (c *serveConfig) roles() []string {
	var out []string
	for _, r := range strings.Split(c.Roles, ",") {
		out = append(out, strings.TrimSpace(r))
	}
	return out
}

func (c *serveConfig) has(role string) bool {
	for _, r := range strings.Split(c.Roles, ",") {
		if strings.TrimSpace(r) == role {
			return true
		}
	}
	return false
}

func newLogger(c *serveConfig, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs one node until ctx ends, then shuts down gracefully: in-flight
// requests finish, grains write their final checkpoints, the log flushes.
func serve(ctx context.Context, c *serveConfig) error {
	logger := newLogger(c, os.Stderr)
	slog.SetDefault(logger)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	// Bind the HTTP port first: a busy port is one clear line, before
	// anything else starts.
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	defer ln.Close()
	var pprofLn net.Listener
	if c.PprofAddr != "" {
		if pprofLn, err = net.Listen("tcp", c.PprofAddr); err != nil {
			return fmt.Errorf("pprof: listen on %s: %w", c.PprofAddr, err)
		}
		defer pprofLn.Close()
	}

	sealer, err := openSealer(c)
	if err != nil {
		return err
	}
	adminHash, err := adminToken(c, os.Stdout)
	if err != nil {
		return err
	}

	var elog persistence.Log
	if c.has("actor") {
		elog, err = openLog(ctx, c)
		if err != nil {
			return err
		}
		defer elog.Close()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var peers []string
	if c.Peers != "" {
		for _, p := range strings.Split(c.Peers, ",") {
			peers = append(peers, strings.TrimSpace(p))
		}
	}
	actorLog := logger.With("component", "protoactor")
	if c.LogLevel != "debug" {
		actorLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})).With("component", "protoactor")
	}
	guard := &health.Guard{AllowPrivate: c.AllowPrivateHealthURLs}
	errc0 := make(chan error, 3)
	n, err := node.Start(node.Config{
		Member: c.has("actor"), Host: c.ClusterHost, Port: c.ClusterPort, AdvertisedHost: c.ClusterAdvertise,
		HealthAddr: c.ClusterHealth, Peers: peers, ActorLogger: actorLog,
		Deps: node.Deps{Log: elog, Sealer: sealer, Hash: seal.HashSecret, Logger: logger, Metrics: node.NewMetrics(reg), WriteQueue: c.RoomWriteQueue,
			LoadTests: node.LoadTestDeps{BaseURL: strings.TrimRight(c.PublicURL, "/")}, Health: health.NewHTTP(guard)},
	})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if c.ProxyConfig != "" {
		stopProxy, err := startProxy(c.ProxyConfig, c.ProxyAddr, strings.TrimRight(c.PublicURL, "/"), n, sealer, logger, errc0)
		if err != nil {
			n.Stop(context.Background())
			return err
		}
		defer stopProxy()
	}
	hub := ws.NewHub(n.Views, logger, time.Now)
	console, err := dashboard.New(dashboard.Config{PublicURL: strings.TrimRight(c.PublicURL, "/")})
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	liveHub := live.New(live.Config{Client: n.Client, AdminHash: adminHash, Hash: seal.HashSecret, Logger: logger})
	srv := api.New(api.Config{Node: n, PublicURL: strings.TrimRight(c.PublicURL, "/"), AdminTokenHash: adminHash,
		Hash: seal.HashSecret, Logger: logger, Registry: reg,
		Extra:          []func(*echo.Echo){hub.Register, liveHub.Register, console.Register},
		AdminRoutes:    []func(*echo.Group, echo.MiddlewareFunc){instances.Register(n.Client)},
		LoadTestLimits: loadtest.Limits{MaxRatePerSecond: float64(c.LoadTestMaxRate), MaxSeconds: c.LoadTestMaxSeconds},
		HealthGuard:    guard})
	reporter := instances.Start(instances.Config{Node: n, Roles: c.roles(), PublicURL: c.PublicURL, Version: version,
		Requests: instances.CounterTotal(reg, "aditus_queue_http_requests_total"), Logger: logger,
		Sockets: func() int { return hub.Sockets() + liveHub.Sockets() }})
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := errc0
	go func() { errc <- httpSrv.Serve(ln) }()
	if pprofLn != nil {
		defer servePprof(pprofLn, errc)()
		logger.Info("pprof serving on loopback", "addr", pprofLn.Addr().String())
	}
	logger.Info("aditus-queue serving", "addr", ln.Addr().String(), "public", c.PublicURL, "log", c.Log,
		"roles", c.Roles, "cluster", n.Address(), "health", n.HealthAddr())
	if serving != nil {
		serving(srv.Echo(), ln.Addr().String())
	}

	var failed error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http: %w", err)
		}
	case <-n.Failed():
		failed = n.FailedErr()
		logger.Error("leaving the cluster", "error", failed)
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	hub.Close()
	liveHub.Close()
	reporter.Stop(sctx)
	n.Stop(sctx)
	return failed
}

// serving, when set, is told the router and the listen address once serve
// answers HTTP: the API document's test walks the very routes serve built.
var serving func(e *echo.Echo, addr string)

func openLog(ctx context.Context, c *serveConfig) (persistence.Log, error) {
	if c.Log == "kafka" {
		octx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		l, err := kafkalog.Open(octx, kafkalog.Config{Brokers: strings.Split(c.KafkaBrokers, ","),
			EventsTopic: c.KafkaEventsTopic, SnapshotsTopic: c.KafkaSnapshotsTopic,
			Partitions: c.KafkaPartitions, ReplicationFactor: c.KafkaReplication})
		if err != nil {
			return nil, fmt.Errorf("kafka at %s: %w", c.KafkaBrokers, err)
		}
		return l, nil
	}
	l, err := filelog.Open(filepath.Join(c.DataDir, "log"))
	if err != nil {
		return nil, fmt.Errorf("embedded log: %w", err)
	}
	return l, nil
}

// adminToken returns the hash of the operator's token. Without one given, a
// token is generated on first start, printed this once, and only its hash
// is kept in the data directory.
func adminToken(c *serveConfig, out io.Writer) ([]byte, error) {
	if c.AdminToken != "" {
		return seal.HashSecret(c.AdminToken), nil
	}
	path := filepath.Join(c.DataDir, "admin-token.sha256")
	if b, err := os.ReadFile(path); err == nil && len(b) == 32 {
		return b, nil
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	tok := "aqa_" + base64.RawURLEncoding.EncodeToString(raw)
	h := seal.HashSecret(tok)
	if err := os.WriteFile(path, h, 0o600); err != nil {
		return nil, fmt.Errorf("store admin token hash: %w", err)
	}
	fmt.Fprintf(out, "\nadmin token (shown once; only its hash is kept in %s):\n\n    %s\n\n", path, tok)
	return h, nil
}
