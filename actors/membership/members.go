// Package membership keeps a node in the cluster: the watch of the member
// list, of whether any member can be reached, of partitions, of stalls and
// of the log's failure, the log as witness, and the cluster's shutdown. It
// knows neither the rooms' rules nor HTTP (actors/sides_test.go).
package membership

import (
	"log/slog"
	"sort"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/eventstream"
)

// MemberWatch follows the cluster's member list for the client: which
// member owns a grain, and which attempts in flight went to a member that
// has left, so they are retried elsewhere at once instead of waiting out
// their timeout.
type MemberWatch struct {
	log    *slog.Logger
	events *eventstream.EventStream
	sub    *eventstream.Subscription

	// known is closed once the first member list has arrived: before it no
	// grain can be placed.
	known     chan struct{}
	knownOnce sync.Once
	settled   func()
	// Forget drops the cached activations at a member's address.
	Forget func(*cluster.Member)

	mu sync.Mutex
	// mu guards the fields below.
	// gen counts the member lists received; done is the latest of them
	// known to have been handed to every subscriber (await).
	gen, done uint64
	members   map[string]bool // addresses of the current members
	ids       map[string]bool // identities of the current members
	listed    bool            // a member list has arrived
	rdv       *cluster.Rendezvous
	waiters   map[string]map[chan struct{}]struct{} // by member address
	// moves are attempts to abandon when their grain's owner changes.
	moves map[chan struct{}]ownerWait
}

// Known is closed once the first member list has arrived.
func (w *MemberWatch) Known() <-chan struct{} { return w.known }

// ownerWait is an attempt sent to addr for a grain the rendezvous hash
// placed there.
type ownerWait struct {
	id   *cluster.ClusterIdentity
	addr string
}

// NewMemberWatch subscribes to sys's member lists. settled must return
// only once the member list that is being published has been handed to
// every subscriber (taking the member list's lock does that: it publishes
// under it).
func NewMemberWatch(sys *actor.ActorSystem, log *slog.Logger, settled func()) *MemberWatch {
	w := &MemberWatch{log: log, events: sys.EventStream, members: map[string]bool{}, known: make(chan struct{}), settled: settled,
		rdv: cluster.NewRendezvous(), waiters: map[string]map[chan struct{}]struct{}{}, moves: map[chan struct{}]ownerWait{}}
	// The event stream calls subscribers synchronously, while the member
	// list holds its lock: onTopology only updates maps and closes channels.
	w.sub = sys.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*cluster.ClusterTopology); ok {
			w.onTopology(t)
		}
	})
	return w
}

func (w *MemberWatch) onTopology(t *cluster.ClusterTopology) {
	w.mu.Lock()
	w.gen++
	w.members, w.ids, w.listed = map[string]bool{}, map[string]bool{}, true
	for _, m := range t.Members {
		w.members[m.Address()] = true
		w.ids[m.Id] = true
	}
	w.rdv = cluster.NewRendezvous()
	w.rdv.UpdateMembers(t.Members)
	var left, joined []string
	for _, m := range t.Left {
		left = append(left, m.Address())
		for ch := range w.waiters[m.Address()] {
			close(ch)
		}
		delete(w.waiters, m.Address())
	}
	for _, m := range t.Joined {
		joined = append(joined, m.Address())
		// A member joining at an address holds no activation yet: one
		// cached there is of an earlier process at the same address (a
		// member killed and started again on its ports), and a request
		// sent to it is never answered.
		if w.Forget != nil {
			w.Forget(m)
		}
	}
	for ch, o := range w.moves {
		if w.rdv.GetByClusterIdentity(o.id) != o.addr {
			close(ch)
			delete(w.moves, ch)
		}
	}
	n := len(w.members)
	w.mu.Unlock()
	// The identity lookup takes the same member list in this Publish,
	// after or before us: known is closed once the publication is over,
	// so calls made after it find the identity lookup up to date.
	w.knownOnce.Do(func() {
		go func() {
			w.settled()
			close(w.known)
		}()
	})
	sort.Strings(left)
	sort.Strings(joined)
	w.log.Info("cluster members changed", "members", n, "joined", joined, "left", left)
}

// Await returns once the latest member list this watch received has been
// handed to every subscriber of the member list, protoactor's identity
// lookup included. The watch hears of a list while it is being published
// and closes the channels of attempts to members that left at once, so
// without await the next attempt could be placed by the identity lookup's
// previous list: on the member that just died, where placing a grain
// waits a fixed 5 s that no member list ends. Cheap when nothing changed.
func (w *MemberWatch) Await() {
	w.mu.Lock()
	gen, done := w.gen, w.done
	w.mu.Unlock()
	if done >= gen {
		return
	}
	w.settled()
	w.mu.Lock()
	w.done = max(w.done, gen)
	w.mu.Unlock()
}

// MemberIDs returns the identities of the current members.
func (w *MemberWatch) MemberIDs() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ids
}

// Size is the number of current members, and whether a member list has
// arrived yet.
func (w *MemberWatch) Size() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.members), w.listed
}

// IsMember reports whether addr is a current member; before the first
// member list arrives every address is taken to be one.
func (w *MemberWatch) IsMember(addr string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.members) == 0 || w.members[addr]
}

// Owner is the address of the member that places grain identity of kind,
// by the rendezvous hash the identity lookup uses; "" when none is known.
func (w *MemberWatch) Owner(identity, kind string) string {
	w.mu.Lock()
	rdv := w.rdv
	w.mu.Unlock()
	return rdv.GetByClusterIdentity(cluster.NewClusterIdentity(identity, kind))
}

// Watch returns a channel that is closed when the member at addr leaves,
// and a release to call when the caller stops waiting. An address that is
// not a current member is never watched (the channel stays open).
func (w *MemberWatch) Watch(addr string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if addr == "" || !w.members[addr] {
		return nil, func() {}
	}
	ch := make(chan struct{})
	if w.waiters[addr] == nil {
		w.waiters[addr] = map[chan struct{}]struct{}{}
	}
	w.waiters[addr][ch] = struct{}{}
	return ch, func() {
		w.mu.Lock()
		delete(w.waiters[addr], ch)
		w.mu.Unlock()
	}
}

// WatchOwner returns a channel that is closed when the rendezvous hash
// places grain identity of kind on another member than addr (a member
// joined or left), and a release to call when the caller stops waiting.
// The member at addr stops its activation then, and a request still on
// its way there may never be answered. Nothing is watched when addr is not
// the grain's owner now.
func (w *MemberWatch) WatchOwner(identity, kind, addr string) (<-chan struct{}, func()) {
	id := cluster.NewClusterIdentity(identity, kind)
	w.mu.Lock()
	defer w.mu.Unlock()
	if addr == "" || w.rdv.GetByClusterIdentity(id) != addr {
		return nil, func() {}
	}
	ch := make(chan struct{})
	w.moves[ch] = ownerWait{id: id, addr: addr}
	return ch, func() {
		w.mu.Lock()
		delete(w.moves, ch)
		w.mu.Unlock()
	}
}

func (w *MemberWatch) Stop() { w.events.Unsubscribe(w.sub) }

// Addresses lists the current members' addresses.
func (w *MemberWatch) Addresses() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.members))
	for a := range w.members {
		out = append(out, a)
	}
	return out
}
