package membership

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/eventstream"
)

// A member cut off from the others by the network (it runs, but its health
// checks of the others and theirs of it time out) ends like a stalled one
// (stall.go): its peers drop it, it drops them, and protoactor never admits
// it again under the same identity, so its member list and theirs disagree
// for good. It cannot tell a partition from the others' deaths; what it can
// tell is that it no longer sees a majority of the members it was started
// with. A member that has seen a majority and then sees fewer than a
// majority for longer than a grace period gives up, so that it is restarted
// and joins again under a new identity once the network lets it. The
// majority side keeps serving: it still sees a majority. Grains the cut-off
// member held are activated on the majority side; fencing (actors/grain, journal.go)
// keeps the numbers unique meanwhile.
//
// A member cut off from everything, itself included, keeps its last member
// list (the provider publishes no list when no health check answers): then
// the provider's own health error, persisting for longer than the grace
// period, counts the same.
//
// With fewer than three members no majority survives the loss of one, and
// a partition cannot be told from a peer's death: the rule is off there.
//
// With a witness (witness.go) the member asks the log before it gives up:
// it ends only when the members it cannot see still heartbeat there, or
// when it cannot reach the log; when they are silent, they are gone, and
// it stays and serves their rooms.

// PartitionWatch follows the member list and fails the node when it has
// seen fewer than quorum members for longer than grace.
type PartitionWatch struct {
	quorum int
	grace  time.Duration
	fail   func(error)
	// health is the provider's health: an error while no member answers.
	health func() error
	events *eventstream.EventStream
	sub    *eventstream.Subscription
	stopper
	// witness, when set, is asked before the node is failed.
	witness *Witness
	log     *slog.Logger

	mu sync.Mutex
	// mu guards the fields below.
	seen    int
	visible map[string]bool // identities in the member list
	// staying is set once the witness found the others gone.
	staying bool
	armed   bool      // a majority has been seen
	since   time.Time // when the member list fell below quorum; zero while it is not
	// unhealthy is when the provider's health error was first seen in a
	// row; zero while it reports none.
	unhealthy time.Time
}

// NewPartitionWatch watches sys's member list for a cluster of peers
// members; nil when the rule is off (fewer than three peers).
func NewPartitionWatch(sys *actor.ActorSystem, peers int, grace time.Duration, health func() error, fail func(error), wit *Witness, log *slog.Logger) *PartitionWatch {
	if peers < 3 || grace <= 0 {
		return nil
	}
	w := &PartitionWatch{quorum: peers/2 + 1, grace: grace, health: health, fail: fail, events: sys.EventStream, stopper: stopper{stop: make(chan struct{})},
		witness: wit, log: log}
	w.sub = sys.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*cluster.ClusterTopology); ok {
			ids := map[string]bool{}
			for _, m := range t.Members {
				ids[m.Id] = true
			}
			w.onTopology(ids, time.Now())
		}
	})
	w.wg.Add(1)
	go w.run()
	return w
}

// Seed takes the member list that stood before the watch subscribed, as
// the client's member watch took it.
func (w *PartitionWatch) Seed(m *MemberWatch) {
	if w == nil {
		return
	}
	if ids := m.MemberIDs(); len(ids) > 0 {
		w.onTopology(ids, time.Now())
	}
}

// onTopology records a member list of the members ids seen at now.
func (w *PartitionWatch) onTopology(ids map[string]bool, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(ids)
	w.seen, w.visible = n, ids
	switch {
	case n >= w.quorum:
		w.armed, w.since, w.staying = true, time.Time{}, false
	case w.armed && w.since.IsZero():
		w.since = now
	}
}

// onHealth records the provider's health at now.
func (w *PartitionWatch) onHealth(err error, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
		w.unhealthy = time.Time{}
	case w.armed && w.unhealthy.IsZero():
		w.unhealthy = now
	}
}

// check fails the node when the member list has stayed below quorum (or
// the provider has reached nobody) for longer than grace at now, unless
// the witness finds the others gone; it reports whether it failed.
func (w *PartitionWatch) check(now time.Time) bool {
	w.mu.Lock()
	since, seen, unhealthy, visible := w.since, w.seen, w.unhealthy, w.visible
	w.mu.Unlock()
	var why string
	switch {
	case !unhealthy.IsZero() && now.Sub(unhealthy) > w.grace:
		why = fmt.Sprintf("has reached no member of the cluster, itself included, for %v", now.Sub(unhealthy).Round(time.Millisecond))
		visible = nil // its member list is the last one, not what it sees
	case !since.IsZero() && now.Sub(since) > w.grace:
		why = fmt.Sprintf("has seen only %d of the cluster's members (fewer than the majority of %d) for %v", seen, w.quorum, now.Sub(since).Round(time.Millisecond))
	default:
		return false
	}
	if w.witness != nil {
		v, said := w.witness.judge(visible, w.grace, now)
		switch v {
		case undecided:
			return false
		case othersGone:
			w.stay(why, said)
			return false
		case logUnreachable:
			w.fail(fmt.Errorf("this member %s and cannot ask the log whether the others are gone (%s): it is cut off from the others; restart it so that it joins under a new identity once it can reach them", why, said))
			return true
		}
		why += " while the log shows them alive (" + said + ")"
	}
	w.fail(fmt.Errorf("this member %s: it is cut off from the others; restart it so that it joins under a new identity once it can reach them", why))
	return true
}

// stay records, once per loss of the majority, that the witness found the
// members out of sight gone.
func (w *PartitionWatch) stay(why, said string) {
	w.mu.Lock()
	first := !w.staying
	w.staying = true
	w.mu.Unlock()
	if first {
		w.log.Warn("the members out of sight are silent in the log: they are gone; this member stays and serves their rooms",
			"lost", why, "log", said)
	}
}

func (w *PartitionWatch) run() {
	defer w.wg.Done()
	t := time.NewTicker(min(w.grace/4, 250*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case now := <-t.C:
			if w.health != nil {
				select {
				case err := <-askAsync(w.health):
					w.onHealth(err, now)
				case <-w.stop:
					return
				}
			}
			if w.check(time.Now()) {
				return
			}
		}
	}
}

func (w *PartitionWatch) Close() {
	if w == nil {
		return
	}
	w.events.Unsubscribe(w.sub)
	w.halt()
}
