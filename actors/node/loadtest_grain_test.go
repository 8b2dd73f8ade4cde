package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// TestLoadTestGrainRunsAndRecords drives the grain and its runner against
// a stand-in for the visitor front (the real front is in transport/api's
// tests): one run to its end, a refused second run, the figures recorded
// in batches, and a stop.
func TestLoadTestGrainRunsAndRecords(t *testing.T) {
	var joins atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/queue/grain-room/join") {
			http.NotFound(w, r)
			return
		}
		joins.Add(1)
		w.Write([]byte(`{"ticket":"t","number":1}`))
	}))
	defer front.Close()
	l := memlog.New()
	n := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l,
		LoadTests: grain.LoadTestDeps{BaseURL: front.URL, FlushSeconds: 2}}})
	stopNode(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cr := mustCreate(t, ctx, n, room.Config{Slug: "grain-room", Name: "Grain", RatePerMinute: 60, Active: true, Test: true})
	spec := loadtest.Spec{SiteID: cr.View.ID, Slug: "grain-room", Profile: loadtest.ProfileJoin, RatePerSecond: 20, DurationSeconds: 3}
	run, err := n.Client.LoadTestStart(ctx, spec)
	if err != nil || run.State != loadtest.StateRunning {
		t.Fatalf("start: %+v %v", run, err)
	}
	if _, err := n.Client.LoadTestStart(ctx, spec); !protocol.IsCode(err, protocol.CodeConflict) {
		t.Fatalf("second start: %v, want conflict", err)
	}
	got := waitEnded(ctx, t, n, run.ID)
	if got.State != loadtest.StateFinished || got.Totals == nil || got.Totals.OK < 50 || len(got.Series) < 2 {
		t.Fatalf("ended run: %+v", got)
	}
	if int64(got.Totals.Requests) != joins.Load() {
		t.Errorf("totals count %d requests, the front saw %d", got.Totals.Requests, joins.Load())
	}
	// Per-second figures are in the log in batches, not a record each.
	var batches int
	_, _ = l.Replay(ctx, protocol.LoadTestsID, -1, func(r persistence.Record) error {
		if strings.Contains(string(r.Data), `"type":"run-seconds"`) {
			batches++
		}
		return nil
	})
	if batches == 0 || batches >= len(got.Series) {
		t.Errorf("%d batches for %d seconds", batches, len(got.Series))
	}

	spec.DurationSeconds = 60
	run, err = n.Client.LoadTestStart(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	// Stopped once it has run a second, so that the stop ends a run in
	// progress.
	eventually(t, 10*time.Second, "the second run's first second", func() bool {
		r, err := n.Client.LoadTest(ctx, run.ID, 0)
		return err == nil && len(r.Series) > 0
	})
	stopped, err := n.Client.LoadTestStop(ctx, run.ID)
	if err != nil || stopped.State != loadtest.StateStopped {
		t.Fatalf("stop: %+v %v", stopped, err)
	}
	page, err := n.Client.LoadTests(ctx, 10, "")
	if err != nil || len(page.Runs) != 2 || page.Runs[0].ID != run.ID {
		t.Fatalf("history: %+v %v", page, err)
	}
}

func waitEnded(ctx context.Context, t *testing.T, n *Node, id string) *loadtest.Run {
	t.Helper()
	for {
		r, err := n.Client.LoadTest(ctx, id, 0)
		if err == nil && r.Ended() {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s did not end: %+v %v", id, r, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
