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
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/dashboard"
	"github.com/aditus-queue/aditus-queue/dashboard/instances"
	"github.com/aditus-queue/aditus-queue/dashboard/live"
	"github.com/aditus-queue/aditus-queue/internal/gcfloor"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/kafkalog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/proxy"
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
	LogFormat, LogLevel, MasterKey, OpsAddr                        string
	ClusterHost, ClusterAdvertise, ClusterHealth, Peers            string
	ClusterPort, KafkaPartitions, KafkaReplication                 int
	LoadTestMaxRate, LoadTestMaxSeconds                            int
	// MaxPageSockets bounds the waiting-page WebSockets of this node.
	MaxPageSockets int
	// RoomWriteQueue bounds each room's queue of writes asked for by
	// callers (bypass codes, changes); beyond it they are answered busy.
	RoomWriteQueue int
	// AllowPrivateHealthURLs lets autoRate health URLs reach loopback and
	// private addresses (tests, shops on a private network).
	AllowPrivateHealthURLs bool
	ProxyConfig, ProxyAddr string
	// ProxyUpstreamClient is the proxy's path to its upstreams (fast or
	// std); ProxyUpstreamTimeout bounds an upstream's silence.
	ProxyUpstreamClient string
	// ProxyVisitorServer is the server the proxy faces visitors with
	// (fast or std).
	ProxyVisitorServer   string
	ProxyUpstreamTimeout time.Duration
	// TrustedProxies are the CIDRs of proxies whose X-Forwarded-For is
	// believed (comma-separated; empty: none, the peer is the client).
	TrustedProxies string
	// BeaconURL is a drand HTTP endpoint (chain URL) whose rounds committed
	// draws mix in; BeaconWaitSeconds bounds the wait for a round.
	BeaconURL         string
	BeaconWaitSeconds int
	// MinFreeDisk is the free space, in bytes, under which the embedded
	// log's node refuses new rooms.
	MinFreeDisk int64
	// GCHeapFloor is the heap goal, in bytes, the collector is kept at or
	// above while the live heap is small (internal/gcfloor); 0 leaves Go's
	// default. An operator's GOGC switches it off.
	GCHeapFloor int64
	// LogRetention is how long events stay after a snapshot covers them.
	LogRetention time.Duration
}

// minAdminToken is the shortest --admin-token accepted: the token guards
// every room, and failed guesses are only slowed, not stopped.
const minAdminToken = 24

// parseServeFlags reads flags (serveFlagRows); each has an environment
// twin (AQ_ + the flag in upper snake case), and flags win.
func parseServeFlags(args []string, getenv func(string) string) (*serveConfig, error) {
	c := &serveConfig{}
	var raw rawServeFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	// A bad flag is one clear line (printed by main); --help prints all.
	fs.SetOutput(io.Discard)
	envErr := defineEnvFlags(fs, getenv, serveFlagRows(c, &raw))
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(os.Stderr)
			fmt.Fprintln(os.Stderr, "usage: aditus-queue serve [flags]")
			fs.PrintDefaults()
			return nil, errHelp
		}
		return nil, fmt.Errorf("%w (see aditus-queue serve --help)", err)
	}
	if envErr != nil {
		return nil, envErr
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := c.parseRaw(raw); err != nil {
		return nil, err
	}
	return c, nil
}

// check validates the flags that need no parsing of their own.
func (c *serveConfig) check() error {
	switch c.Log {
	case "file":
	case "kafka":
		if c.KafkaBrokers == "" {
			return errors.New("--log kafka needs --kafka-brokers")
		}
	default:
		return fmt.Errorf("--log must be file or kafka, not %q", c.Log)
	}
	for _, r := range strings.Split(c.Roles, ",") {
		if r = strings.TrimSpace(r); r != "front" && r != "actor" {
			return fmt.Errorf("--roles: unknown role %q (front, actor)", r)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format must be text or json")
	}
	if c.LoadTestMaxRate < 1 || c.LoadTestMaxRate > load.MaxRate {
		return fmt.Errorf("--loadtest-max-rate must be 1–%d", load.MaxRate)
	}
	if c.BeaconWaitSeconds < 1 || c.BeaconWaitSeconds > 600 {
		return errors.New("--beacon-wait must be 1–600 seconds")
	}
	if c.LoadTestMaxSeconds < 1 || c.LoadTestMaxSeconds > int(load.MaxDuration/time.Second) {
		return fmt.Errorf("--loadtest-max-seconds must be 1–%d", int(load.MaxDuration/time.Second))
	}
	if c.MaxPageSockets < 1 {
		return fmt.Errorf("--max-page-sockets must be at least 1, not %d", c.MaxPageSockets)
	}
	if c.AdminToken != "" && len(c.AdminToken) < minAdminToken {
		return fmt.Errorf("--admin-token (or AQ_ADMIN_TOKEN) is %d characters; it must be at least %d (or leave it unset: a token is generated and printed once)",
			len(c.AdminToken), minAdminToken)
	}
	if _, err := c.trusted(); err != nil {
		return err
	}
	return nil
}

// parseRaw parses the flags held as text (sizes, durations) and checks
// the ones whose check is another package's.
func (c *serveConfig) parseRaw(raw rawServeFlags) error {
	var err error
	if c.MinFreeDisk, err = parseBytes(raw.minFree); err != nil {
		return fmt.Errorf("--min-free-disk: %w", err)
	}
	if c.GCHeapFloor, err = parseBytes(raw.gcFloor); err != nil || c.GCHeapFloor > gcfloor.MaxFloor {
		return fmt.Errorf("--gc-heap-floor: %q is not a size of at most 1TiB (say 64MiB, or 0 for Go's default)", raw.gcFloor)
	}
	if c.LogRetention, err = parseDays(raw.retention); err != nil || c.LogRetention < time.Minute {
		return fmt.Errorf("--log-retention: %q is not a duration of a minute or more (say 7d or 36h)", raw.retention)
	}
	if _, err := proxy.ParseForwarding(c.ProxyUpstreamClient); err != nil {
		return fmt.Errorf("--proxy-upstream-client: %w", err)
	}
	if _, err := proxy.ParseVisitorServer(c.ProxyVisitorServer); err != nil {
		return fmt.Errorf("--proxy-visitor-server: %w", err)
	}
	if c.ProxyUpstreamTimeout, err = time.ParseDuration(raw.upstreamTimeout); err != nil || c.ProxyUpstreamTimeout < time.Millisecond {
		return fmt.Errorf("--proxy-upstream-timeout: %q is not a duration of a millisecond or more (say 60s)", raw.upstreamTimeout)
	}
	if c.RoomWriteQueue < 1 || c.RoomWriteQueue > maxRoomWriteQueue {
		return fmt.Errorf("--room-write-queue must be 1–%d", maxRoomWriteQueue)
	}
	if c.OpsAddr == "" {
		return errors.New("--ops-addr is empty: /metrics and the probes need a listener of their own (127.0.0.1:9090 by default)")
	}
	return nil
}

// trusted parses --trusted-proxies.
func (c *serveConfig) trusted() ([]netip.Prefix, error) {
	p, err := clientaddr.ParsePrefixes(strings.Split(c.TrustedProxies, ","))
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	return p, nil
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

// serve runs one node until ctx ends or one of its listeners fails, then
// shuts it down in order (bootstrap.stop): listeners stop accepting and
// drain, sockets close, grains write their final checkpoints, the log
// flushes. A listener's failure is returned, naming the listener.
func serve(ctx context.Context, c *serveConfig) error {
	b, err := begin(c, "visitor", c.Addr, "ops", c.OpsAddr)
	if err != nil {
		return err
	}
	defer b.close()
	adminHash, err := adminToken(c, os.Stdout)
	if err != nil {
		return err
	}
	if err := b.startNode(ctx); err != nil {
		return err
	}
	n, logger := b.node, b.logger
	if c.ProxyConfig != "" {
		if err := startProxy(b, c); err != nil {
			return err
		}
	}
	trusted, _ := c.trusted() // checked by parseServeFlags
	clients := clientaddr.NewResolver(trusted)
	auth, err := adminauth.New(adminauth.Config{Directory: n.Client, AdminHash: adminHash, Hash: seal.HashSecret, Clients: clients})
	if err != nil {
		return err
	}
	srv, hub, liveHub, err := visitorSide(b, c, adminHash, auth, clients)
	if err != nil {
		return err
	}
	reporter := instances.Start(instances.Config{Node: n.Front, Roles: c.roles(), PublicURL: c.PublicURL,
		Requests: instances.CounterTotal(b.reg, "aditus_queue_http_requests_total"), Logger: logger,
		Sockets: func() int { return hub.Sockets() + liveHub.Sockets() }})
	visitor, ops := b.ls.get("visitor"), b.ls.get("ops")
	b.ls.serve(visitor, publicServer(srv.Handler()))
	serveOps(b.ls, ops, srv.Ops())
	logger.Info("aditus-queue serving", "addr", visitor.ln.Addr().String(), "ops", ops.ln.Addr().String(), "public", c.PublicURL,
		"log", c.Log, "roles", c.Roles, "cluster", n.Address(), "health", n.HealthAddr())
	if serving != nil {
		serving(srv.Echo(), visitor.ln.Addr().String())
	}
	if listening != nil {
		listening(b.ls)
	}
	failed := b.wait(ctx)
	b.stop(func(ctx context.Context) {
		hub.Close()
		liveHub.Close()
		reporter.Stop(ctx)
	})
	return failed
}

// visitorSide builds what the visitor listener serves beside the API: the
// waiting pages' sockets, the console and its live feed.
func visitorSide(b *bootstrap, c *serveConfig, adminHash []byte, auth *adminauth.Authenticator, clients *clientaddr.Resolver) (*api.Server, *ws.Hub, *live.Hub, error) {
	n, logger := b.node, b.logger
	hub, err := ws.NewHub(n.Views, logger, time.Now, ws.Limits{PerTicket: ws.DefaultPerTicket, PerNode: c.MaxPageSockets})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("waiting-page sockets: %w", err)
	}
	b.reg.MustRegister(hub.Collectors()...)
	b.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aditus_queue_presence_dropped_total",
		Help: "Presence reports dropped because their room's sync message was full."}, func() float64 { return float64(n.Views.SeenDropped()) }))
	console, err := dashboard.New(dashboard.Config{PublicURL: b.publicURL})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("console: %w", err)
	}
	liveHub := live.New(live.Config{Client: n.Client, Auth: auth, Logger: logger})
	srv := api.New(api.Config{Node: n.Front, PublicURL: b.publicURL, AdminTokenHash: adminHash,
		Hash: seal.HashSecret, Logger: logger, Registry: b.reg, Clients: clients, Auth: auth,
		Extra:          []func(*echo.Echo){hub.Register, liveHub.Register, console.Register},
		AdminRoutes:    []func(*echo.Group, echo.MiddlewareFunc){instances.Register(n.Client)},
		LoadTestLimits: loadtest.Limits{MaxRatePerSecond: float64(c.LoadTestMaxRate), MaxSeconds: c.LoadTestMaxSeconds},
		HealthGuard:    b.guard, RoomGuard: b.roomGuard})
	hub.AllowLookup = srv.AllowLookup // before serving: one budget of unknown names for the API and the socket
	return srv, hub, liveHub, nil
}

// listening, when set, is told serve's listeners once they serve (tests
// of a listener's failure).
var listening func(ls *listeners)

// serving, when set, is told the router and the listen address once serve
// answers HTTP: the API document's test walks the very routes serve built.
var serving func(e *echo.Echo, addr string)

func openLog(ctx context.Context, c *serveConfig) (persistence.Log, error) {
	if c.Log == "kafka" {
		octx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		l, err := kafkalog.Open(octx, kafkalog.Config{Brokers: strings.Split(c.KafkaBrokers, ","),
			EventsTopic: c.KafkaEventsTopic, SnapshotsTopic: c.KafkaSnapshotsTopic,
			Partitions: c.KafkaPartitions, ReplicationFactor: c.KafkaReplication, Retention: c.LogRetention})
		if err != nil {
			return nil, fmt.Errorf("kafka at %s: %w", c.KafkaBrokers, err)
		}
		return l, nil
	}
	l, err := filelog.OpenOptions(filepath.Join(c.DataDir, "log"), filelog.Options{Retention: c.LogRetention})
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
