package membership

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
)

// await waits for the publication of the latest member list to end (the
// member list's lock, held while it publishes), so that an attempt retried
// the moment its member left is placed by the identity lookup's new list,
// not its old one; once a list is settled, await costs nothing.
func TestAwaitWaitsForThePublicationOfTheLatestList(t *testing.T) {
	var calls atomic.Int32
	turns, entered := make(chan struct{}, 8), make(chan struct{}, 8)
	w := &MemberWatch{log: slog.New(slog.NewTextHandler(io.Discard, nil)), members: map[string]bool{}, known: make(chan struct{}),
		settled: func() { calls.Add(1); entered <- struct{}{}; <-turns },
		rdv:     cluster.NewRendezvous(), waiters: map[string]map[chan struct{}]struct{}{}, moves: map[chan struct{}]ownerWait{}}

	w.Await() // no list yet: nothing to wait for
	if n := calls.Load(); n != 0 {
		t.Fatalf("await before any list asked the member list %d times, want 0", n)
	}

	a := &cluster.Member{Id: "a", Host: "127.0.0.1", Port: 1, Kinds: []string{"room"}}
	b := &cluster.Member{Id: "b", Host: "127.0.0.1", Port: 2, Kinds: []string{"room"}}
	gone, release := w.Watch("")
	release()
	if gone != nil {
		t.Fatal("an empty address is watched")
	}
	w.onTopology(&cluster.ClusterTopology{Members: []*cluster.Member{a, b}, Joined: []*cluster.Member{a, b}})
	gone, release = w.Watch(b.Address())
	defer release()
	// The member list drops b while it publishes: b's attempts are let go
	// at once, and the next attempt awaits the end of the publication.
	w.onTopology(&cluster.ClusterTopology{Members: []*cluster.Member{a}, Left: []*cluster.Member{b}})
	select {
	case <-gone:
	default:
		t.Fatal("the attempt to the member that left is not let go")
	}
	awaited := make(chan struct{})
	go func() {
		w.Await()
		close(awaited)
	}()
	// Both the first list's settling (known) and await are in the member
	// list's lock now: await cannot have returned.
	timeout := time.After(10 * time.Second)
	for range 2 {
		select {
		case <-entered:
		case <-timeout:
			t.Fatalf("await did not ask the member list: %d calls", calls.Load())
		}
	}
	select {
	case <-awaited:
		t.Fatal("await returned while the publication was in progress")
	default:
	}
	turns <- struct{}{}
	turns <- struct{}{}
	select {
	case <-awaited:
	case <-time.After(10 * time.Second):
		t.Fatal("await did not return once the publication ended")
	}
	w.Await()
	if n := calls.Load(); n != 2 {
		t.Fatalf("await of a settled list asked the member list again: %d calls, want 2", n)
	}
	if owner := w.Owner("room-1", "room"); owner != a.Address() {
		t.Fatalf("owner after b left: %q, want %q", owner, a.Address())
	}
}

// A member that joins holds no activation yet: the activations cached at
// its address (an earlier process on the same ports) are forgotten, and
// only those.
func TestJoiningMemberForgetsCachedActivationsAtItsAddress(t *testing.T) {
	cache := cluster.NewPidCache()
	w := &MemberWatch{log: slog.New(slog.NewTextHandler(io.Discard, nil)), members: map[string]bool{}, known: make(chan struct{}),
		settled: func() {}, Forget: cache.RemoveByMember,
		rdv: cluster.NewRendezvous(), waiters: map[string]map[chan struct{}]struct{}{}, moves: map[chan struct{}]ownerWait{}}
	a := &cluster.Member{Id: "a", Host: "127.0.0.1", Port: 1, Kinds: []string{"room"}}
	b := &cluster.Member{Id: "b", Host: "127.0.0.1", Port: 2, Kinds: []string{"room"}}
	w.onTopology(&cluster.ClusterTopology{Members: []*cluster.Member{a}, Joined: []*cluster.Member{a}})
	cache.Set("on-a", "room", actor.NewPID(a.Address(), "partition-activator/on-a$1"))
	cache.Set("on-b", "room", actor.NewPID(b.Address(), "partition-activator/on-b$7"))
	// b was killed and starts again on its ports, under a new identity.
	b2 := &cluster.Member{Id: "b2", Host: b.Host, Port: b.Port, Kinds: b.Kinds}
	w.onTopology(&cluster.ClusterTopology{Members: []*cluster.Member{a, b2}, Joined: []*cluster.Member{b2}})
	if pid, ok := cache.Get("on-b", "room"); ok {
		t.Fatalf("the activation of the earlier process at %s is still cached: %v", b.Address(), pid)
	}
	if _, ok := cache.Get("on-a", "room"); !ok {
		t.Fatal("the activation on a, which did not change, was forgotten")
	}
}
