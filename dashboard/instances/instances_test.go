package instances_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/dashboard/instances"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/api/apitest"
)

const adminTok = apitest.AdminToken

// A node reports itself through the registry grain; the endpoint lists it
// for the operator only, and a graceful stop takes it off at once.
func TestInstancesEndpoint(t *testing.T) {
	s := apitest.Start(t, apitest.Options{Front: func(n *front.Front, c *api.Config) {
		c.AdminRoutes = append(c.AdminRoutes, instances.Register(n.Client))
	}})
	n, reg, log := s.Node, s.Registry, s.Logger
	r := instances.Start(instances.Config{Node: n.Front, Roles: []string{"front", "actor"}, PublicURL: apitest.PublicURL,
		Build: release.Info{Version: "test", Commit: "c0ffee", Go: "go1.x", Features: []string{"modes"}}, Requests: instances.CounterTotal(reg, "aditus_queue_http_requests_total"),
		Sockets: func() int { return 7 }, Logger: log, Interval: 200 * time.Millisecond})
	defer r.Stop(context.Background())

	var in map[string]any
	testwait.UntilEvery(t, 10*time.Second, 100*time.Millisecond, "a report with a request rate", func() bool {
		st, m := s.Call("GET", "/api/admin/queue/instances", adminTok, nil)
		if st != 200 {
			t.Fatalf("instances: %d %v", st, m)
		}
		if l := m["instances"].([]any); len(l) == 1 {
			in = l[0].(map[string]any)
		}
		return in != nil && in["requestsPerSecond"].(float64) > 0
	})
	if in["id"] != n.ID() || in["address"] != n.Address() || in["version"] != "test" || in["webSockets"] != float64(7) ||
		in["rssBytes"].(float64) <= 0 || in["heapBytes"].(float64) <= 0 || in["goroutines"].(float64) <= 0 ||
		in["publicUrl"] != apitest.PublicURL || in["commit"] != "c0ffee" || in["goVersion"] != "go1.x" || fmt.Sprint(in["features"]) != "[modes]" {
		t.Fatalf("report: got %v", in)
	}
	if _, err := time.Parse(time.RFC3339, in["reportedAt"].(string)); err != nil {
		t.Fatalf("reportedAt: %v", err)
	}

	// Keys are refused with 403 JSON, nobody with 401.
	key := s.CreateKey(s.CreateRoom("k", 60))
	if st, m := s.Call("GET", "/api/admin/queue/instances", key, nil); st != 403 || m["error"] != "forbidden" || m["message"] == "" {
		t.Fatalf("with a key: got %d %v, want 403 forbidden", st, m)
	}
	if st, m := s.Call("GET", "/api/admin/queue/instances", "", nil); st != 401 || m["error"] == nil {
		t.Fatalf("without a token: got %d %v, want 401", st, m)
	}

	r.Stop(context.Background())
	if st, m := s.Call("GET", "/api/admin/queue/instances", adminTok, nil); st != 200 || len(m["instances"].([]any)) != 0 {
		t.Fatalf("after a graceful stop: got %d %v, want an empty list", st, m)
	}
}
