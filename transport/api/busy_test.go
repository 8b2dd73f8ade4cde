package api

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
)

// A join beyond the bound of joins a front gathers for one room is
// answered 503 busy with Retry-After, takes no number, and shows in the
// metrics; every number handed out is kept (the issued count equals the
// joins answered 200).
func TestJoinBusyBeyondTheGatheredBound(t *testing.T) {
	var reg *prometheus.Registry
	e := newEnvWithNode(t, func(_ *grain.Deps, c *Config) { reg = c.Registry }, func(c *node.Config) { c.MaxPendingJoins = 1 })
	e.createRoom("crowd", 60)
	const burst, bursts = 32, 50
	var (
		mu      sync.Mutex
		numbers []int
		busy    int
		bad     []string
	)
	for range bursts {
		var wg sync.WaitGroup
		for range burst {
			wg.Go(func() {
				st, m, h := e.do("POST", "/queue/crowd/join", "", nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case st == http.StatusOK && m["ticket"] != nil:
					n, _ := m["number"].(float64)
					numbers = append(numbers, int(n))
				case st == http.StatusServiceUnavailable && m["error"] == "busy" && m["message"] != "" && h.Get("Retry-After") != "":
					busy++
				default:
					bad = append(bad, http.StatusText(st))
				}
			})
		}
		wg.Wait()
		if busy > 0 {
			break
		}
	}
	if len(bad) > 0 {
		t.Fatalf("answers other than 200 or 503 busy: %v", bad)
	}
	if busy == 0 {
		t.Fatalf("%d bursts of %d joins with a bound of 1 gathered join: none refused busy", bursts, burst)
	}
	slices.Sort(numbers)
	for i, n := range numbers {
		if n != i+1 {
			t.Fatalf("numbers answered 200: %v; want 1 to %d: a refused join took a number", numbers, len(numbers))
		}
	}
	body := metricsOf(reg)
	if !regexp.MustCompile(`(?m)^aditus_queue_joins_busy_total [1-9]`).Match(body) ||
		!regexp.MustCompile(`(?m)^aditus_queue_joins_pending 0$`).Match(body) ||
		!regexp.MustCompile(`(?m)^aditus_queue_join_batches_total [1-9]`).Match(body) {
		t.Fatalf("metrics lack the join gauges:\n%s", body)
	}
}

// metricsOf returns reg as the operations listener serves it.
func metricsOf(reg *prometheus.Registry) []byte {
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.Bytes()
}
