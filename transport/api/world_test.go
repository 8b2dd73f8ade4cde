package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// stillClock stands still until advanced. Grains tick in real time but
// decide in the time it tells, so a test controls the admission line to
// the position.
type stillClock struct{ ns atomic.Int64 }

func newStillClock() *stillClock {
	c := &stillClock{}
	c.ns.Store(time.Now().Truncate(time.Second).UnixNano())
	return c
}

func (c *stillClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *stillClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// world is one node with its HTTP front on a log and clock that outlive
// it, so a test can restart the node and find the room as it was.
type world struct {
	*env
	log   persistence.Log
	clock *stillClock
	node  *node.Node
	// health and peers place the node in a cluster of several members;
	// empty, it is a cluster of its own.
	health string
	peers  []string
}

func newWorld(t *testing.T, l persistence.Log, clock *stillClock) *world {
	t.Helper()
	w := &world{log: l, clock: clock}
	w.start(t)
	w.waitAnswer(t)
	return w
}

// newPair starts two members of one cluster on one log, each with its own
// HTTP front, and waits until each sees the other.
func newPair(t *testing.T, l persistence.Log, clock *stillClock) (*world, *world) {
	t.Helper()
	peers := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	a := &world{log: l, clock: clock, health: peers[0], peers: peers}
	b := &world{log: l, clock: clock, health: peers[1], peers: peers}
	a.start(t)
	b.start(t)
	waitMembers(t, a.node, b.node)
	a.waitAnswer(t)
	b.waitAnswer(t)
	return a, b
}

// waitMembers waits until each of nodes sees all of them as members: from
// then on they place every grain alike. It reads the member list without
// the cluster's lock (Node.Members), a race the race detector reports, so
// the tests that start several members in one process do not run under it.
func waitMembers(t *testing.T, nodes ...*node.Node) {
	t.Helper()
	if raceDetector {
		t.Fatal("waitMembers under the race detector")
	}
	waitFor(t, 30*time.Second, "the members to see each other", func() bool {
		for _, n := range nodes {
			if len(n.Members()) != len(nodes) {
				return false
			}
		}
		return true
	})
}

func testLogger() *slog.Logger { return nodetest.Logger() }

func (w *world) start(t *testing.T) {
	t.Helper()
	n, err := node.Start(node.Config{Member: true, HealthAddr: w.health, Peers: w.peers, Deps: grain.Deps{Log: w.log,
		Sealer: sealer, Hash: sha, Logger: testLogger(), Now: w.clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	w.node = n
	w.env = w.front(t, n)
	t.Cleanup(func() {
		if w.node != n { // a restart stopped it already
			return
		}
		// Stopped gracefully and before the next test starts its node: a
		// killed node keeps polling for members and slows every later
		// cluster in the process, and one stopping while another starts
		// races on the gRPC logger.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
}

// waitAnswer waits until the node answers: forming the cluster takes a
// moment.
func (w *world) waitAnswer(t *testing.T) {
	t.Helper()
	if raceDetector {
		// protoactor's distributed-hash lookup installs the first member
		// list without a lock; a call in the meantime is a race the
		// detector reports. Let the first list arrive (one TTL) first.
		time.Sleep(2 * time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := w.node.Client.List(ctx); err != nil {
		t.Fatalf("the node does not answer: %v", err)
	}
}

// loopbackProxy trusts the test's own loopback as a proxy, so a test can
// send requests from other client addresses with X-Forwarded-For.
var loopbackProxy = clientaddr.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")})

// front serves HTTP from node n (a member or a front-only node).
func (w *world) front(t *testing.T, n *node.Node) *env {
	t.Helper()
	reg := prometheus.NewRegistry()
	s := New(Config{Node: n.Front, PublicURL: "http://queue.test", AdminTokenHash: sha(adminTok), Hash: sha, Logger: testLogger(),
		Registry: reg, Now: w.clock.Now, Clients: loopbackProxy})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, registry: reg}
}

// restart stops the node (gracefully, or as a crash) and starts a new one
// on the same log.
func (w *world) restart(t *testing.T, graceful bool) {
	t.Helper()
	w.srv.Close()
	if graceful {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		w.node.Stop(ctx)
		cancel()
	} else {
		w.node.Kill()
	}
	w.start(t)
	w.waitAnswer(t)
}

// stop stops the node gracefully for good.
func (w *world) stop() {
	w.srv.Close()
	n := w.node
	w.node = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n.Stop(ctx)
}

// raw sends a request and returns the answer as it came.
func (e *env) raw(method, path string, body any) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// patchSite reads site id, changes it with edit and writes it back.
func (e *env) patchSite(id string, edit func(site map[string]any)) map[string]any {
	e.t.Helper()
	st, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil)
	if st != http.StatusOK {
		e.t.Fatalf("get site: %d %v", st, site)
	}
	edit(site)
	st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, site)
	if st != http.StatusOK {
		e.t.Fatalf("patch site: %d %v", st, m)
	}
	return m
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	nodetest.Eventually(t, d, what, cond)
}
