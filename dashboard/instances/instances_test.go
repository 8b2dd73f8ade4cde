package instances_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/dashboard/instances"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/api"
)

const adminTok = "test-admin-token"

func get(t *testing.T, url, auth string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// A node reports itself through the registry grain; the endpoint lists it
// for the operator only, and a graceful stop takes it off at once.
func TestInstancesEndpoint(t *testing.T) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := filelog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sealer, _ := seal.NewSealer(make([]byte, seal.KeySize))
	reg := prometheus.NewRegistry()
	n, err := node.Start(node.Config{Member: true, Deps: node.Deps{Log: l, Sealer: sealer, Hash: seal.HashSecret, Logger: log}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	}()
	s := api.New(api.Config{Node: n, PublicURL: "http://queue.test", AdminTokenHash: seal.HashSecret(adminTok),
		Hash: seal.HashSecret, Logger: log, Registry: reg,
		AdminRoutes: []func(*echo.Group, echo.MiddlewareFunc){instances.Register(n.Client)}})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	r := instances.Start(instances.Config{Node: n, Roles: []string{"front", "actor"}, PublicURL: "http://queue.test",
		Version: "test", Requests: instances.CounterTotal(reg, "aditus_queue_http_requests_total"),
		Sockets: func() int { return 7 }, Logger: log, Interval: 200 * time.Millisecond})
	defer r.Stop(context.Background())

	var in map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for in == nil || in["requestsPerSecond"].(float64) <= 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no report with a request rate within 10 s: %v", in)
		}
		st, m := get(t, srv.URL+"/api/admin/queue/instances", adminTok)
		if st != 200 {
			t.Fatalf("instances: %d %v", st, m)
		}
		if l := m["instances"].([]any); len(l) == 1 {
			in = l[0].(map[string]any)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if in["id"] != n.ID() || in["address"] != n.Address() || in["version"] != "test" || in["webSockets"] != float64(7) ||
		in["rssBytes"].(float64) <= 0 || in["heapBytes"].(float64) <= 0 || in["goroutines"].(float64) <= 0 ||
		in["publicUrl"] != "http://queue.test" {
		t.Fatalf("report: got %v", in)
	}
	if _, err := time.Parse(time.RFC3339, in["reportedAt"].(string)); err != nil {
		t.Fatalf("reportedAt: %v", err)
	}

	// Keys are refused with 403 JSON, nobody with 401.
	key := createKey(t, srv.URL)
	if st, m := get(t, srv.URL+"/api/admin/queue/instances", key); st != 403 || m["error"] != "forbidden" || m["message"] == "" {
		t.Fatalf("with a key: got %d %v, want 403 forbidden", st, m)
	}
	if st, m := get(t, srv.URL+"/api/admin/queue/instances", ""); st != 401 || m["error"] == nil {
		t.Fatalf("without a token: got %d %v, want 401", st, m)
	}

	r.Stop(context.Background())
	if st, m := get(t, srv.URL+"/api/admin/queue/instances", adminTok); st != 200 || len(m["instances"].([]any)) != 0 {
		t.Fatalf("after a graceful stop: got %d %v, want an empty list", st, m)
	}
}

func createKey(t *testing.T, base string) string {
	t.Helper()
	post := func(path, body string) map[string]any {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminTok)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		if res.StatusCode != 201 {
			t.Fatalf("POST %s: %d %v", path, res.StatusCode, m)
		}
		return m
	}
	id := post("/api/admin/queue/sites", `{"slug":"k","name":"K","ratePerMinute":60,"active":true}`)["site"].(map[string]any)["id"].(string)
	return post("/api/admin/queue/sites/"+id+"/keys", `{"name":"ops"}`)["key"].(string)
}
