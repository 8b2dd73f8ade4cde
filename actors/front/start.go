// Package front is what every node runs to call the grains: the client
// with its retries, the join batcher and its circuit breaker, the cache of
// room views the fronts answer from, the lookups of unknown room names, and
// the capacity, dashboard and load-test clients. It knows the grains only
// by what actors/protocol says of them; transport/ and dashboard/ reach the
// cluster through it alone (actors/sides_test.go).
package front

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what the front side of a node is built from.
type Config struct {
	// Timeout bounds one grain call, retries included.
	Timeout time.Duration
	Logger  *slog.Logger
	// Members and Reach are the node's watches of the members.
	Members Members
	Reach   Reach
	// Opener opens the rooms' sealed keys; Unavailable (nil: none) counts
	// the rooms whose keys it cannot open.
	Opener      Opener
	Unavailable prometheus.Gauge
	// MaxPendingJoins bounds the joins of one room gathered while the
	// room's batch is on its way (0: the default).
	MaxPendingJoins int
	// LogErr reports this member's log failure (nil, or always nil, on a
	// front alone).
	LogErr func() error
}

// Members is what the client needs to know of the cluster's members
// (actors/membership's MemberWatch is one).
type Members interface {
	// Known is closed once the first member list has arrived.
	Known() <-chan struct{}
	// Await returns once the latest member list has reached the identity
	// lookup.
	Await()
	// IsMember reports whether addr is a current member.
	IsMember(addr string) bool
	// Owner is the address of the member that places grain identity of
	// kind, "" when none is known.
	Owner(identity, kind string) string
	// Watch's channel is closed when the member at addr leaves;
	// WatchOwner's when grain identity's owner is no longer addr. Each
	// comes with a release to call when the caller stops waiting.
	Watch(addr string) (<-chan struct{}, func())
	WatchOwner(identity, kind, addr string) (<-chan struct{}, func())
}

// Reach is what the client needs to know of whether any member can be
// reached (actors/membership's ReachWatch is one).
type Reach interface {
	// LostCh is closed once no member is reachable.
	LostCh() <-chan struct{}
}

// Start starts the client of the grains on c, with its views and its
// join batcher.
func Start(sys *actor.ActorSystem, c *cluster.Cluster, cfg Config) (*Client, *Views) {
	cl := &Client{cluster: c, timeout: cfg.Timeout, log: cfg.Logger, members: cfg.Members, reach: cfg.Reach, logErr: cfg.LogErr}
	cl.views = newViews(sys, cl, cfg.Opener, cfg.Logger, cfg.Unavailable)
	cl.joins = newBatcher(cl)
	if cfg.MaxPendingJoins > 0 {
		cl.joins.maxPending = cfg.MaxPendingJoins
	}
	return cl, cl.views
}

// JoinsPending reports the joins this node has gathered, in all rooms,
// that are not on their way to a grain yet.
func (c *Client) JoinsPending() int64 { return c.joins.pending.Load() }

// JoinBatches reports the batches of joins this node has sent to grains.
func (c *Client) JoinBatches() int64 { return c.joins.batches.Load() }

// JoinsRefused reports the joins this node refused busy, because their
// room's gathered joins were at the bound.
func (c *Client) JoinsRefused() int64 { return c.joins.refused.Load() }

// Front is what the HTTP side and the dashboard hold of a running node:
// its grain client and views, and what the node tells of itself.
type Front struct {
	Client *Client
	Views  *Views
	Self
}

// Self is what a node tells of itself.
type Self interface {
	// ID is the node's cluster member id, unique per process start;
	// Address its remote address (host:port).
	ID() string
	Address() string
	// LogErr is the failure of this member's log, nil while it works;
	// DamagedStreams counts the streams of its log found damaged.
	LogErr() error
	DamagedStreams() int
}

// JoinsPending, JoinBatches and JoinsRefused are the client's join
// counters (Client.JoinsPending …).
func (f *Front) JoinsPending() int64 { return f.Client.JoinsPending() }

// JoinBatches reports the batches of joins this node has sent to grains.
func (f *Front) JoinBatches() int64 { return f.Client.JoinBatches() }

// JoinsRefused reports the joins this node refused busy.
func (f *Front) JoinsRefused() int64 { return f.Client.JoinsRefused() }
