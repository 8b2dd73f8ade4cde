package api

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// A client chooses its request's method: 500 requests with invented 4 KB
// methods add one series ("other"), not 500, and the metrics page stays
// small.
func TestMetricsInventedMethodsLeaveNoSeries(t *testing.T) {
	e := newEnv(t)
	e.createRoom("spring", 60)
	series := func() int {
		return bytes.Count(metricsOf(e.registry), []byte("aditus_queue_http_requests_total{"))
	}
	before := series()
	for i := range 500 {
		method := strings.Repeat("X", 4096-4) + string(rune('A'+i%26)) + string(rune('A'+i/26%26)) + "QZ"
		st, _, _ := e.do(method, "/queue/spring/status", "", nil)
		if st < 400 {
			t.Fatalf("invented method answered %d", st)
		}
	}
	e.do(http.MethodGet, "/queue/spring/status", "", nil)
	page := metricsOf(e.registry)
	if got := series(); got > before+2 {
		t.Fatalf("series of aditus_queue_http_requests_total: %d before, %d after 500 invented methods, want at most 2 more", before, got)
	}
	if !bytes.Contains(page, []byte(`method="other"`)) {
		t.Fatalf("invented methods not counted under other:\n%s", page)
	}
	if len(page) > 256<<10 {
		t.Fatalf("metrics page is %d bytes after 500 invented methods", len(page))
	}
}
