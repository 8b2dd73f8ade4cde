package grafana

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/transport/api/apitest"
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
	for _, want := range []string{grain.MetricRoomWaiting, grain.MetricRoomServing, grain.MetricRoomIssued, grain.MetricRoomRate, grain.MetricRoomInflow} {
		if !names[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}

	srv := apitest.Start(t, apitest.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv.CreateRoom("grafana-sale", 1)
	for range 3 {
		if res, err := http.Post(srv.URL+"/queue/grafana-sale/join", "application/json", nil); err == nil {
			res.Body.Close()
		}
	}
	var missing []string
	var text string
	shown := testwait.Poll(10*time.Second, 200*time.Millisecond, func() bool {
		res, err := http.Get(srv.OpsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		text, missing = string(body), nil
		for name := range names {
			if !strings.Contains(text, "\n"+name+`{room="grafana-sale"} `) {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0 && strings.Contains(text, "\n"+grain.MetricRoomIssued+`{room="grafana-sale"} 3`)
	})
	if !shown {
		t.Fatalf("not on /metrics with room=\"grafana-sale\" (or issued ≠ 3): %v\n%s", missing, text)
	}
}
