// Package node runs this process's part of the protoactor-go cluster: it
// assembles the front's side (actors/front) on every node, the grains
// (actors/grain) on members (role actor), and the watches that keep the
// node in the cluster (actors/membership).
package node

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/membership"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	echo3 "github.com/labstack/echo"
	"github.com/prometheus/client_golang/prometheus"
)

// Config describes this node's place in the cluster.
type Config struct {
	// Name is the cluster's name; members of one cluster share it.
	Name string
	// Member hosts grains (role actor); otherwise the node is a client that
	// only calls them (role front).
	Member bool
	// Host and Port are where the remote (gRPC) endpoint listens; port 0
	// picks a free one. AdvertisedHost is what other members dial.
	Host           string
	Port           int
	AdvertisedHost string
	// HealthAddr is where a member answers the cluster provider's health
	// checks (host:port, bound on that host only).
	HealthAddr string
	// Peers are the health addresses of all members, this one included.
	// Empty means a cluster of this node alone.
	Peers []string
	// TTL is how often membership is refreshed; keep it below the call
	// timeout (a dead member stays in the list for up to one TTL).
	TTL time.Duration
	// CallTimeout bounds one grain call, retries included.
	CallTimeout time.Duration
	Deps        grain.Deps
	// ActorLogger receives protoactor's own logs.
	ActorLogger *slog.Logger
	// StallLimit is how long the process may go without running before
	// the node fails (Failed): its peers have dropped it by then. Zero
	// means 2 s (the provider's health-check timeout) in a cluster of
	// several nodes and never for a member alone; negative means never.
	StallLimit time.Duration
	// MaxPendingJoins bounds the joins of one room this node gathers
	// while the room's batch is on its way; beyond it a join is refused
	// busy. Zero means 8192.
	MaxPendingJoins int
	// LogFailGrace is how long the node keeps answering after its log
	// failed for good before it fails (default 10 s).
	LogFailGrace time.Duration
}

// defaultTTL is the pause between two rounds of health checks of the
// members. A member that is killed is dropped at the first round after,
// and its rooms move then: the pause is most of the fail-over time (half
// of it on average). A round costs each node one small HTTP request per
// member.
const defaultTTL = 250 * time.Millisecond

// Node is a running cluster member or client.
type Node struct {
	cfg     Config
	system  *actor.ActorSystem
	cluster *cluster.Cluster
	health  net.Listener
	stall   *membership.StallWatch
	// loadTests keeps the load-test grain activated (stopped by Stop).
	loadTests func()
	// Front is the node's client of the grains, with its views; every
	// node has one.
	*front.Front

	// partition fails the node when it is cut off from the majority.
	partition *membership.PartitionWatch
	// members follows the member lists.
	members *membership.MemberWatch
	// reach knows whether any member can be reached.
	reach *membership.ReachWatch
	// witness heartbeats in the log, for partition (nil on fronts).
	witness *membership.Witness
	// leaving makes the health endpoint answer 503 (handover.go).
	leaving atomic.Bool
	// logs fails the node when its log failed for good.
	logs *membership.LogWatch
	// caps knows the features every node announces (members only).
	caps *grain.CapabilityWatch
}

// Start joins (or forms) the cluster.
func Start(cfg Config) (*Node, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg}
	n.Front = &front.Front{Self: n}
	actorLog := cfg.actorLogger()
	n.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return actorLog }))

	// The automanaged provider's health endpoint, on a listener we bound
	// ourselves so it never listens on every interface.
	e := echo3.New()
	e.HideBanner, e.HidePort = true, true
	peers, healthPort, err := n.listenHealth(e)
	if err != nil {
		return nil, err
	}
	remoteCfg, err := n.remoteConfig()
	if err != nil {
		return nil, err
	}
	if len(peers) == 0 {
		return nil, fmt.Errorf("a front node needs the members' cluster addresses (--peers)")
	}
	provider := automanaged.NewWithTesting(cfg.TTL, healthPort, e, peers...)
	kinds := n.kinds()
	ccfg := cluster.Configure(cfg.Name, provider, disthash.New(), remoteCfg,
		cluster.WithKinds(kinds...), cluster.WithRequestTimeout(cfg.CallTimeout))
	n.cluster = cluster.New(n.system, ccfg)
	n.serveHealth(e, kinds, healthPort)

	// The watch subscribes before the cluster starts, as members publish
	// their first member list while StartMember waits. (Reading the list
	// afterwards would race with the provider's next update: protoactor
	// hands it out without its lock.)
	ml := n.cluster.MemberList
	members := membership.NewMemberWatch(n.system, cfg.Deps.Logger, func() { ml.GetActivatorMember("", "") })
	members.Forget = n.cluster.PidCache.RemoveByMember
	if cfg.Member {
		n.caps = grain.NewCapabilityWatch(func(ctx context.Context) ([]protocol.Instance, error) { return n.Client.Instances(ctx) }, members.Addresses, n.system.Address)
		if n.cfg.Deps.Older == nil {
			n.cfg.Deps.Older = n.caps.Older
		}
		n.cfg.Deps.Leaving = n.leaving.Load
		n.cluster.StartMember()
	} else {
		n.cluster.StartClient()
	}
	n.startClient(provider, members)
	if n.caps != nil {
		n.caps.Start()
	}
	return n, nil
}

// startClient starts what a node calls grains with: the watch of reachable
// members, the client, its views and join batcher, and the member watches.
func (n *Node) startClient(provider *automanaged.AutoManagedProvider, members *membership.MemberWatch) {
	cfg := n.cfg
	n.members = members
	n.reach = membership.NewReachWatch(provider.GetHealthStatus, members.Size)
	n.reach.Start()
	var unavailable prometheus.Gauge
	if cfg.Deps.Metrics != nil {
		unavailable = cfg.Deps.Metrics.RoomsUnavailable
	}
	var opener front.Opener
	if cfg.Deps.Sealer != nil {
		opener = cfg.Deps.Sealer
	}
	n.Client, n.Views = front.Start(n.system, n.cluster, front.Config{Timeout: cfg.CallTimeout, Logger: cfg.Deps.Logger,
		Members: members, Reach: n.reach, Opener: opener, Unavailable: unavailable, MaxPendingJoins: cfg.MaxPendingJoins,
		LogErr: func() error { return n.logs.Err() }})
	n.watch(provider, members)
}

// defaults fills in what cfg leaves out and checks the timeouts.
func (cfg *Config) defaults() error {
	if cfg.Name == "" {
		cfg.Name = "aditus-queue"
	}
	if cfg.TTL == 0 {
		cfg.TTL = defaultTTL
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	if cfg.TTL*2 > cfg.CallTimeout {
		// A dead member stays in the list for up to one TTL (plus the
		// provider's 2 s health timeout for one that hangs): calls must
		// outlast that to reach the member that takes its grains over.
		return fmt.Errorf("cluster TTL %v must be at most half the call timeout %v", cfg.TTL, cfg.CallTimeout)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.AdvertisedHost == "" {
		cfg.AdvertisedHost = cfg.Host
	}
	if cfg.Deps.WriteTimeout == 0 {
		cfg.Deps.WriteTimeout = 5 * time.Second
	}
	if cfg.Deps.Now == nil {
		cfg.Deps.Now = time.Now
	}
	if cfg.Deps.Logger == nil {
		cfg.Deps.Logger = slog.Default()
	}
	return nil
}

// actorLogger is protoactor's logger: ActorLogger (nothing when unset),
// with its repeated lines demoted.
func (cfg *Config) actorLogger() *slog.Logger {
	l := cfg.ActorLogger
	if l == nil {
		l = slog.New(slog.NewTextHandler(discard{}, nil))
	}
	return slog.New(quietHandler{l.Handler()})
}

// listenHealth binds a member's health listener for e and returns the
// peers (this member alone when none are configured) and the port.
func (n *Node) listenHealth(e *echo3.Echo) ([]string, int, error) {
	peers := n.cfg.Peers
	if !n.cfg.Member {
		return peers, 0, nil
	}
	addr := n.cfg.HealthAddr
	if addr == "" {
		addr = net.JoinHostPort(n.cfg.Host, "0")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, 0, fmt.Errorf("cluster health listener on %s: %w", addr, err)
	}
	n.health = ln
	e.Listener = ln
	if len(peers) == 0 {
		peers = []string{ln.Addr().String()}
	}
	return peers, ln.Addr().(*net.TCPAddr).Port, nil
}

// remoteConfig configures the remote endpoint. Its port is found after the
// health listener is bound (held open, it cannot be handed out again
// here), so we know the port to advertise.
func (n *Node) remoteConfig() (*remote.Config, error) {
	port := n.cfg.Port
	if port == 0 {
		p, err := freePort(n.cfg.Host)
		if err != nil {
			if n.health != nil {
				n.health.Close()
			}
			return nil, err
		}
		port = p
	}
	adv := net.JoinHostPort(n.cfg.AdvertisedHost, strconv.Itoa(port))
	return remote.Configure(n.cfg.Host, port, remote.WithAdvertisedHost(adv)), nil
}

// kinds are the grains a member hosts; none on a front.
func (n *Node) kinds() []*cluster.Kind {
	if !n.cfg.Member {
		return nil
	}
	return grain.Kinds(&n.cfg.Deps)
}

// serveHealth answers the provider's health checks on e.
func (n *Node) serveHealth(e *echo3.Echo, kinds []*cluster.Kind, healthPort int) {
	kindNames := []string{}
	for _, k := range kinds {
		kindNames = append(kindNames, k.Kind)
	}
	name := n.cfg.Name
	e.GET("/_health", func(c echo3.Context) error {
		host, p, err := n.system.GetHostPort()
		if err != nil || n.leaving.Load() {
			return c.NoContent(http.StatusServiceUnavailable)
		}
		return c.JSON(http.StatusOK, automanaged.NewNode(name, n.system.ID, host, p, healthPort, kindNames))
	})
}

// watch starts the watches that fail the node: a stall, and on a member
// a partition and a log that failed for good; a member also keeps the
// load-test grain activated.
func (n *Node) watch(provider *automanaged.AutoManagedProvider, members *membership.MemberWatch) {
	limit := n.cfg.StallLimit
	if limit == 0 && (len(n.cfg.Peers) > 1 || !n.cfg.Member) {
		limit = membership.DefaultStallLimit
	}
	n.stall = membership.NewStallWatch(limit)
	if n.cfg.Member {
		n.logs = membership.WatchLog(n.cfg.Deps.Log, n.cfg.LogFailGrace, n.cfg.Deps.Logger, n.stall.Fail)
	}
	if n.cfg.Member {
		n.loadTests = front.KeepLoadTests(n.Client)
		if n.cfg.Deps.Log != nil && len(n.cfg.Peers) >= 3 {
			n.witness = membership.NewWitness(n.cfg.Deps.Log, n.health.Addr().String(), n.system.ID, n.cfg.Peers, n.cfg.Deps.Logger, time.Now())
			n.witness.Start()
		}
		n.partition = membership.NewPartitionWatch(n.system, len(n.cfg.Peers), limit, provider.GetHealthStatus, n.stall.Fail, n.witness, n.cfg.Deps.Logger)
		// The lists published while the member started came before the
		// watch subscribed.
		n.partition.Seed(members)
	}
}

// Failed is closed when the node can no longer take part in the cluster
// and must be restarted; FailedErr then says why.
func (n *Node) Failed() <-chan struct{} { return n.stall.Failed() }

// FailedErr is the reason Failed was closed.
func (n *Node) FailedErr() error { return n.stall.Err() }

// LogErr is the failure of this member's log, or nil while it works: the
// node reports it on /queue/healthz until it ends.
func (n *Node) LogErr() error { return n.logs.Err() }

// Stop leaves the cluster: the others take the member's rooms over first
// (handover.go), then grains write their final checkpoints.
func (n *Node) Stop(ctx context.Context) {
	n.stopWatches()
	n.leave(ctx)
	n.stopClient()
	done := make(chan struct{})
	go func() {
		membership.Shutdown(n.cluster, n.cfg.Member, true)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	if n.health != nil {
		_ = n.health.Close()
	}
}

// stopWatches stops the watches that fail the node, the load tests' keeper
// and the features' watch: what runs beside the grains.
func (n *Node) stopWatches() {
	n.stall.Close()
	n.logs.Close()
	n.stopLoadTests()
	n.partition.Close()
	n.witness.Close()
	n.caps.Stop()
}

// stopClient stops what the front calls grains with.
func (n *Node) stopClient() {
	n.reach.Close()
	n.Views.Stop()
	n.members.Stop()
}

// Kill drops the node without a graceful hand-over (tests of fail-over).
func (n *Node) Kill() {
	n.stopWatches()
	n.stopClient()
	membership.Shutdown(n.cluster, n.cfg.Member, false)
	if n.cfg.Member {
		// As a dead process would: no more health answers, on open
		// connections either, and no more checks of the others.
		_ = n.cluster.Config.ClusterProvider.Shutdown(false)
	}
	if n.health != nil {
		_ = n.health.Close()
	}
}

// Address is the node's remote address (host:port).
func (n *Node) Address() string { return n.system.Address() }

// HealthAddr is the member's cluster health address, "" for a client.
func (n *Node) HealthAddr() string {
	if n.health == nil {
		return ""
	}
	return n.health.Addr().String()
}

// Members returns the addresses of the members this node currently sees.
func (n *Node) Members() []string {
	var out []string
	for _, m := range n.cluster.MemberList.Members().Members() {
		out = append(out, m.Address())
	}
	return out
}

func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", host, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// quietHandler demotes to debug the lines protoactor repeats every TTL
// for as long as a peer of the static list is down; the member list's
// changes are logged once each, by the client ("cluster members changed").
type quietHandler struct{ slog.Handler }

var repeatedActorLines = map[string]bool{
	"Bad connection to the node health status": true,
	"Bad response from the node health status": true,
	"Bad data from the node health status":     true,
	"Failure reaching nodes":                   true,
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if repeatedActorLines[r.Message] {
		r.Level = slog.LevelDebug
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// ID is this node's cluster member id, unique per process start.
func (n *Node) ID() string { return n.system.ID }

// IsMember reports whether this node hosts grains (role actor).
func (n *Node) IsMember() bool { return n.cfg.Member }

func (n *Node) stopLoadTests() {
	if n.loadTests != nil {
		n.loadTests()
	}
}
