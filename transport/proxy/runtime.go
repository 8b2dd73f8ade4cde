package proxy

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// Runtime settings. An operator changes a capacity room at runtime in its
// grain (actors/capacity/runtime.go). What the grain decides (active,
// paused, open, the automatic proof of work) holds on every node at once;
// what a node enforces itself (the address budget, the proof of work in
// force) it learns with the answer to its renewal batch, which each node
// sends for each room every flushInterval whether or not anyone was seen.
// The batch carries the room as this node's file has it, and the node's
// figures for the console.

// gateRuntime is what this node last learnt of its room.
type gateRuntime struct {
	// version is the runtime version in force (0: none learnt, or the
	// file's settings unchanged).
	version atomic.Int64
	// answer is the room's last answer (nil until the first).
	answer atomic.Pointer[protocol.CapacityTouchAnswer]
	// mu serialises learning; budget is the address budget in force.
	mu     sync.Mutex
	budget *capacity.Settings
}

// batch is this node's renewal batch for its room.
func (g *gate) batch(ids []string, challenged uint64) protocol.CapacityTouch {
	return protocol.CapacityTouch{Visitors: ids, Challenged: challenged, Settings: g.room.Settings, Host: g.room.Host, Name: g.room.Name, FileAt: g.fileAt,
		Report: &capacity.NodeReport{Node: g.node, Refusals: g.budget.refused.Load(), Challenges: g.pow.challenges.Load(),
			Pow: int(g.pow.bits.Load())}}
}

// learn takes in the room's answer to a batch: the proof of work in force
// and, when it changed, the address budget.
func (g *gate) learn(a protocol.CapacityTouchAnswer) {
	g.setPow(a.Pow)
	g.rt.answer.Store(&a)
	g.rt.mu.Lock()
	defer g.rt.mu.Unlock()
	if a.Settings.Validate() == nil && (g.rt.budget == nil || g.rt.budget.AddressBudget != a.Settings.AddressBudget) {
		if g.rt.budget != nil || a.Settings.AddressBudget != g.room.AddressBudget {
			g.setBudget(a.Settings.AddressBudget)
		}
		s := a.Settings
		g.rt.budget = &s
	}
	if old := g.rt.version.Swap(a.Version); old != a.Version {
		g.log.Info("room's runtime settings", "version", a.Version, "active", a.Settings.Active, "paused", a.Paused, "open", a.Open)
	}
}

// setBudget puts address budget b in force: the buckets of new visitors
// and those of the grain calls of each address's cookies (waitingBudget).
func (g *gate) setBudget(b room.AddressBudget) {
	l, err := budgetLimiter(b, g.now)
	var wl *ratelimit.Limiter
	if err == nil {
		wl, err = waitingLimiter(b, g.waiting.refresh, g.now)
	}
	if err != nil {
		g.log.Warn("address budget from the room not usable; keeping the one in force", "error", err)
		return
	}
	g.budget.tokens.Store(l)
	g.waiting.tokens.Store(wl)
	g.log.Info("address budget changed", "perMinute", b.PerMinute, "burst", b.Burst)
}

// RuntimeVersion is the runtime version of capacity room (host, name) this
// node last learnt, and whether the node serves that room.
func (h *Handler) RuntimeVersion(host, name string) (int64, bool) {
	for _, g := range h.gates {
		if g.room.Host == host && g.room.Name == name {
			return g.rt.version.Load(), true
		}
	}
	return 0, false
}

// Announcer is a Store that lists this node's capacity rooms for the
// console (ClusterStore: the cluster's index of capacity rooms).
type Announcer interface {
	Announce(ctx context.Context, rooms []protocol.CapacityRoom) error
}

// Announce implements Announcer.
func (s ClusterStore) Announce(ctx context.Context, rooms []protocol.CapacityRoom) error {
	return s.Client.CapacityAnnounce(ctx, rooms)
}

// announce tells the store this node's capacity rooms, every
// protocol.AnnounceInterval (ticks counts the flushes).
func (h *Handler) announce(ticks int) {
	a, ok := h.store.(Announcer)
	if !ok || len(h.gates) == 0 || ticks%int(protocol.AnnounceInterval/flushInterval) != 0 {
		return
	}
	rooms := make([]protocol.CapacityRoom, 0, len(h.gates))
	for _, g := range h.gates {
		rooms = append(rooms, protocol.CapacityRoom{ID: g.id, Host: g.room.Host, Name: g.room.Name})
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := a.Announce(ctx, rooms); err != nil {
		h.log.Warn("capacity rooms not announced to the console's list", "error", err)
	}
}
