package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/api/apidoc"
)

// TestClusterUnavailableAnswers runs serve as a front node whose only peer
// never answers: joins, tokens and bypass codes are answered 503
// cluster_unavailable with Retry-After, at once, as the API document says,
// and the process keeps serving.
func TestClusterUnavailableAnswers(t *testing.T) {
	base := startDocServer(t, "--roles", "front", "--peers", testbin.FreeAddr(t))
	c := &docClient{t: t, base: base, doc: apidoc.Load(t, api.OpenAPI)}
	// The first round of the cluster's health checks finds nobody.
	testwait.UntilEvery(t, 20*time.Second, 50*time.Millisecond, "a join answered 503 with no member reachable", func() bool {
		st, _, _ := c.raw("POST", "/queue/nobody/join", "", map[string]any{})
		return st == http.StatusServiceUnavailable
	})
	for _, r := range []struct {
		path string
		body map[string]any
	}{
		{"/queue/nobody/join", map[string]any{}},
		{"/queue/nobody/token", map[string]any{"ticket": "x"}},
		{"/queue/nobody/bypass", map[string]any{"code": "some-code"}},
	} {
		start := time.Now()
		m := c.call(http.StatusServiceUnavailable, "POST", r.path, "", r.body)
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("POST %s with no member reachable answered after %v, want within 500 ms", r.path, took)
		}
		if m["error"] != "cluster_unavailable" {
			t.Errorf("POST %s with no member reachable: %v, want cluster_unavailable", r.path, m)
		}
	}
	c.call(http.StatusOK, "GET", "/queue/healthz", "", nil)
}
