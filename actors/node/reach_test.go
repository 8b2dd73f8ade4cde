package node

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// memberAt starts a member whose cluster health listener is addr and whose
// peers are peers, on log l.
func memberAt(t *testing.T, l persistence.Log, addr string, peers []string) *Node {
	t.Helper()
	return mustStart(t, Config{Member: true, HealthAddr: addr, Peers: peers, StallLimit: -1,
		Deps: grain.Deps{Log: l}})
}

// A front whose only member is killed answers joins and tokens
// cluster_unavailable at once instead of waiting out the call timeout,
// keeps the room's view (marked stale after a few seconds), and uses the
// member started again in its place without a restart of its own.
func TestFrontWithoutMembers(t *testing.T) {
	if raceEnabled {
		t.Skip("two actor systems in one process race inside gRPC's global logger under -race; this test runs without -race")
	}
	addr := testbin.FreeAddr(t)
	l := memlog.New()
	peers := []string{addr}
	m := memberAt(t, l, addr, peers)
	front := mustStart(t, Config{Peers: peers, StallLimit: -1})
	defer front.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	deadline, _ := ctx.Deadline()
	defer cancel()
	cr := mustCreate(t, ctx, front, room.Config{Slug: "alone", Name: "Alone", RatePerMinute: 6000, Active: true})
	id := cr.View.ID
	first, err := front.Client.Join(ctx, id)
	if err != nil {
		t.Fatal(err)
	}

	m.Kill()
	killed := time.Now()
	var detected time.Duration
	for {
		_, err := front.Client.Join(ctx, id)
		if protocol.IsCode(err, protocol.CodeClusterUnavailable) {
			detected = time.Since(killed)
			break
		}
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("no cluster_unavailable within 20 s of the member's end (last %v)", err)
		}
	}
	t.Logf("first cluster_unavailable %v after the kill", detected.Round(time.Millisecond))
	for _, call := range []struct {
		name string
		f    func() error
	}{
		{"join", func() error { _, err := front.Client.Join(ctx, id); return err }},
		{"token", func() error { _, err := front.Client.Token(ctx, id, first.Number); return err }},
		{"redeem", func() error { _, err := front.Client.Redeem(ctx, id, "some-code"); return err }},
	} {
		start := time.Now()
		err := call.f()
		if took := time.Since(start); !protocol.IsCode(err, protocol.CodeClusterUnavailable) || took > 500*time.Millisecond {
			t.Fatalf("%s with no member: %v after %v, want cluster_unavailable within 500 ms", call.name, err, took)
		}
	}
	r, ok, err := front.Views.BySlug(ctx, "alone")
	if err != nil || !ok || r.View.ID != id {
		t.Fatalf("the room's view with no member: %v %v %v", r, ok, err)
	}
	eventually(t, 30*time.Second, "the room's view to be stale after its last member ended", func() bool { return front.Views.Stale(id) })

	// The member comes back (a new process would have a new identity; so
	// has this new actor system), on the same address and log.
	t.Logf("stale %v after the kill", time.Since(killed).Round(time.Millisecond))
	m2 := memberAt(t, l, addr, peers)
	restarted := time.Now()
	defer m2.Kill()
	var j *protocol.JoinResult
	eventually(t, time.Until(deadline), "a join through the front after the member came back", func() bool {
		j, err = front.Client.Join(ctx, id)
		return err == nil
	})
	t.Logf("first join %v after the member started again", time.Since(restarted).Round(time.Millisecond))
	if j.Number <= first.Number {
		t.Fatalf("number %d after the member came back, not above %d", j.Number, first.Number)
	}
	eventually(t, time.Until(deadline), "the room's view to be fresh after the member came back", func() bool { return !front.Views.Stale(id) })
}
