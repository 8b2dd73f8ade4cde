package grafana

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/api"
)

// exprs collects every "expr" and "query" string of the dashboard.
func exprs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "expr" || k == "definition") {
				*out = append(*out, s)
			}
			exprs(e, out)
		}
	case []any:
		for _, e := range x {
			exprs(e, out)
		}
	}
}

var metricName = regexp.MustCompile(`aditus_queue_[a-z_]+`)

// The dashboard is valid JSON and every metric it queries is on a real
// node's /metrics, labelled with the room's slug.
func TestDashboardMetricsExist(t *testing.T) {
	raw, err := os.ReadFile("aditus-queue-rooms.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var qs []string
	exprs(dash, &qs)
	names := map[string]bool{}
	for _, q := range qs {
		for _, n := range metricName.FindAllString(q, -1) {
			names[n] = true
		}
	}
	for _, want := range []string{node.MetricRoomWaiting, node.MetricRoomServing, node.MetricRoomIssued, node.MetricRoomRate, node.MetricRoomInflow} {
		if !names[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := filelog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sealer, _ := seal.NewSealer(make([]byte, seal.KeySize))
	reg := prometheus.NewRegistry()
	n, err := node.Start(node.Config{Member: true, Deps: node.Deps{Log: l, Sealer: sealer, Hash: seal.HashSecret,
		Logger: log, Metrics: node.NewMetrics(reg)}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	}()
	s := api.New(api.Config{Node: n, PublicURL: "http://queue.test", AdminTokenHash: seal.HashSecret("admin"),
		Hash: seal.HashSecret, Logger: log, Registry: reg})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ops := httptest.NewServer(s.Ops())
	defer ops.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/api/admin/queue/sites",
		strings.NewReader(`{"slug":"grafana-sale","name":"G","ratePerMinute":1,"active":true}`))
	req.Header.Set("Authorization", "Bearer admin")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create room: %v %v", res, err)
	}
	res.Body.Close()
	for range 3 {
		if res, err := http.Post(srv.URL+"/queue/grafana-sale/join", "application/json", nil); err == nil {
			res.Body.Close()
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(ops.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		text := string(body)
		missing := []string{}
		for name := range names {
			if !strings.Contains(text, "\n"+name+`{room="grafana-sale"} `) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 && strings.Contains(text, "\n"+node.MetricRoomIssued+`{room="grafana-sale"} 3`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not on /metrics with room=\"grafana-sale\" (or issued ≠ 3): %v\n%s", missing, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
