package proxy

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// disagreeRoom is runtimeRoom with active set to n.
func disagreeRoom(n string) string {
	return strings.Replace(runtimeRoom, "active         = 1", "active         = "+n, 1)
}

// fileProxy is a proxy node named name serving the file hcl, modified at
// mod, in front of n's capacity grains; the caller closes it.
func fileProxy(t *testing.T, n *node.Node, name, hcl string, mod time.Time) *Reloadable {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	r, err := NewReloadable(path, Options{Store: ClusterStore{Client: n.Client, Opener: nodetest.Sealer}, Node: name,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDifferentFilesDoNotFlipFlop: two proxy nodes run different files
// for one capacity room (active 3, and active 5 in a file edited an hour
// later). However their batches interleave, the room holds the newer
// file's settings, written once: the log gets at most one configured
// event a file, not one a batch. The node with the older file is marked
// in the room's node list and counted on /metrics. Editing the older file
// afterwards makes it the newest, and it wins once in its turn. The same
// holds after a restore from a backup older than both files (the room
// then holds yesterday's file).
func TestDifferentFilesDoNotFlipFlop(t *testing.T) {
	l, err := filelog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	m := grain.NewMetrics(prometheus.NewRegistry())
	n := nodetest.Start(t, node.Config{Member: true, Deps: grain.Deps{Log: l, Metrics: m}})
	ctx := context.Background()
	id := protocol.CapacityID("shop.test", "/")
	base := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	// Yesterday's file, as a backup restored this morning holds it.
	yesterday := fileProxy(t, n, "proxy-0", disagreeRoom("2"), base)
	yesterday.Handler().gates[0].flush(ctx)
	yesterday.Close()

	older := fileProxy(t, n, "proxy-1", disagreeRoom("3"), base.Add(time.Hour))
	newer := fileProxy(t, n, "proxy-2", disagreeRoom("5"), base.Add(2*time.Hour))
	t.Cleanup(older.Close)
	t.Cleanup(newer.Close)
	configured := func() int {
		c := 0
		if _, err := l.Replay(ctx, id, -1, func(r persistence.Record) error {
			if e, err := capacity.DecodeEvent(r.Data); err == nil && e.Type == capacity.TypeConfigured {
				c++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	before := configured()
	for range 10 {
		older.Handler().gates[0].flush(ctx)
		newer.Handler().gates[0].flush(ctx)
	}
	// proxy-1's file (newer than yesterday's) once, proxy-2's once.
	if c := configured() - before; c > 2 || c < 1 {
		t.Fatalf("%d configured events for 20 batches of two files, want one for each newer file at most", c)
	}
	st, err := n.Client.CapacityState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.File.Active != 5 || st.Settings.Active != 5 {
		t.Fatalf("the room holds file active %d (in force %d), want the newest file's 5", st.File.Active, st.Settings.Active)
	}
	differs := map[string]bool{}
	for _, r := range st.Nodes {
		differs[r.Node] = r.FileDiffers
	}
	if !differs["proxy-1"] || differs["proxy-2"] {
		t.Fatalf("node list marks %v, want proxy-1 (the older file) alone", differs)
	}
	if c := counterOf(t, m.FileDisagreements, "aditus_queue_capacity_file_disagreements_total"); c < 9 {
		t.Fatalf("aditus_queue_capacity_file_disagreements_total %v, want one a batch of proxy-1 after its first (9)", c)
	}

	// proxy-1's file is edited now: the newest, it wins once.
	path := older.path
	if err := os.WriteFile(path, []byte(disagreeRoom("4")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, base.Add(3*time.Hour), base.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := older.Reload(); err != nil {
		t.Fatal(err)
	}
	before = configured()
	for range 10 {
		newer.Handler().gates[0].flush(ctx)
		older.Handler().gates[0].flush(ctx)
	}
	if c := configured() - before; c != 1 {
		t.Fatalf("%d configured events after the edit, want 1", c)
	}
	if st, err = n.Client.CapacityState(ctx, id); err != nil || st.File.Active != 4 {
		t.Fatalf("after the edit the room holds file active %d (%v), want 4", st.File.Active, err)
	}
	for _, r := range st.Nodes {
		if r.Node != "proxy-0" && r.FileDiffers != (r.Node == "proxy-2") {
			t.Fatalf("after the edit node %s marked %v", r.Node, r.FileDiffers)
		}
	}
}
