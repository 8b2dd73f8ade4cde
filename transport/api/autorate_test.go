package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/health"
)

// newHealthEnv is newEnv with health checks: allowPrivate as the serve flag.
func newHealthEnv(t *testing.T, allowPrivate bool) *env {
	guard := &health.Guard{AllowPrivate: allowPrivate}
	return newEnvWith(t, func(d *grain.Deps, c *Config) {
		d.Health, d.HealthInterval = health.NewHTTP(guard), 200*time.Millisecond
		c.HealthGuard = guard
	})
}

func wantError(t *testing.T, what string, st int, m map[string]any, status int, field string) {
	t.Helper()
	if st != status || m["error"] == nil || m["message"] == nil || (field != "" && m["field"] != field) {
		t.Fatalf("%s: got %d %v, want %d with field %q", what, st, m, status, field)
	}
}

// Without --allow-private-health-urls, a health URL that reaches our own
// network is refused with 422 on autoRate.healthUrl, on create and update.
func TestHealthURLRefusedWhenPrivate(t *testing.T) {
	e := newHealthEnv(t, false)
	id, _ := e.createRoom("guarded", 60)
	for _, u := range []string{"http://127.0.0.1:8080/health", "http://localhost/health", "http://2130706433/",
		"http://[::ffff:10.0.0.1]/", "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0/", "http://[::1]/"} {
		st, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil)
		if st != http.StatusOK {
			t.Fatal(st)
		}
		site["autoRate"].(map[string]any)["healthUrl"] = u
		st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, site)
		wantError(t, "update "+u, st, m, http.StatusUnprocessableEntity, "autoRate.healthUrl")
		st, m, _ = e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "x", "name": "X", "ratePerMinute": 10,
			"autoRate": map[string]any{"healthUrl": u}})
		wantError(t, "create "+u, st, m, http.StatusUnprocessableEntity, "autoRate.healthUrl")
	}
}

func TestHealthCheckAndRateLogAPI(t *testing.T) {
	var cpu atomic.Value
	cpu.Store("0.2")
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"metrics":{"cpuLoad":%s}}`, cpu.Load())
	}))
	defer shop.Close()
	e := newHealthEnv(t, true)
	id, _ := e.createRoom("auto", 100)
	other, _ := e.createRoom("other", 100)
	path := "/api/admin/queue/sites/" + id
	st, k, _ := e.do("POST", path+"/keys", adminTok, map[string]any{"name": "runbook"})
	if st != http.StatusCreated {
		t.Fatal(st, k)
	}
	key := k["key"].(string)

	// Nothing to test yet.
	st, m, _ := e.do("POST", path+"/health-check/test", key, nil)
	wantError(t, "test without a URL", st, m, http.StatusUnprocessableEntity, "autoRate.healthUrl")
	st, m, _ = e.do("POST", path+"/health-check/test", "", nil)
	wantError(t, "test without credentials", st, m, http.StatusUnauthorized, "")
	st, m, _ = e.do("POST", "/api/admin/queue/sites/"+other+"/health-check/test", key, nil)
	wantError(t, "test of another room", st, m, http.StatusForbidden, "")
	st, m, _ = e.do("GET", "/api/admin/queue/sites/"+other+"/rate-log", key, nil)
	wantError(t, "rate log of another room", st, m, http.StatusForbidden, "")

	e.patchSite(id, func(s map[string]any) {
		s["autoRate"] = map[string]any{"healthUrl": shop.URL + "/health", "minRate": 50, "maxRate": 300,
			"rules": []map[string]any{{"metric": "responseMs", "op": "<", "value": 2000}, {"metric": "metrics.cpuLoad", "op": "<", "value": 0.8}}}
	})
	enable := func(auth string) (int, map[string]any) {
		_, s, _ := e.do("GET", path, adminTok, nil)
		s["autoRate"].(map[string]any)["enabled"] = true
		st, m, _ := e.do("PATCH", path, auth, s)
		return st, m
	}
	st, m = enable(key)
	wantError(t, "enable before a test", st, m, http.StatusUnprocessableEntity, "autoRate.enabled")

	st, m, _ = e.do("POST", path+"/health-check/test", key, nil)
	if st != http.StatusOK || m["ok"] != true || m["status"].(float64) != 200 || m["url"] != shop.URL+"/health" ||
		m["metrics"].(map[string]any)["metrics.cpuLoad"].(float64) != 0.2 || len(m["rules"].([]any)) != 2 {
		t.Fatalf("test call: %d %v", st, m)
	}
	if r := m["rules"].([]any)[1].(map[string]any); r["passed"] != true || r["observed"].(float64) != 0.2 || r["metric"] != "metrics.cpuLoad" {
		t.Fatalf("rule: %v", r)
	}
	if _, ok := m["responseMs"].(float64); !ok {
		t.Fatalf("responseMs: %v", m)
	}
	if st, m = enable(key); st != http.StatusOK {
		t.Fatalf("enable after the test: %d %v", st, m)
	}
	// Defaults are filled in and shown.
	_, s, _ := e.do("GET", path, adminTok, nil)
	ar := s["autoRate"].(map[string]any)
	if ar["raisePercent"].(float64) != 5 || ar["cutPercent"].(float64) != 25 || ar["maxFailures"].(float64) != 3 || ar["intervalSeconds"].(float64) != 10 {
		t.Fatalf("defaults: %v", ar)
	}

	waitFor(t, 20*time.Second, "adjustments in the rate log", func() bool {
		st, m, _ := e.do("GET", path+"/rate-log", key, nil)
		return st == http.StatusOK && len(m["adjustments"].([]any)) >= 2
	})
	cpu.Store("0.95")
	waitFor(t, 20*time.Second, "a cut by the cpu rule", func() bool {
		_, m, _ := e.do("GET", path+"/rate-log", adminTok, nil)
		a := m["adjustments"].([]any)[0].(map[string]any)
		return a["rule"] == "metrics.cpuLoad < 0.8" && a["to"].(float64) < a["from"].(float64) &&
			a["observed"].(map[string]any)["metrics.cpuLoad"].(float64) == 0.95 && a["at"] != nil && a["reason"] != ""
	})

	// A manual rate: clamped to maxRate, logged as manual.
	e.patchSite(id, func(s map[string]any) { s["ratePerMinute"] = 100000 })
	_, m, _ = e.do("GET", path+"/rate-log", adminTok, nil)
	found := false
	for _, a := range m["adjustments"].([]any) {
		a := a.(map[string]any)
		if a["rule"] == "manual" && a["to"].(float64) == 300 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no manual adjustment to 300 in %v", m["adjustments"])
	}

	// A new URL needs a new test.
	_, s, _ = e.do("GET", path, adminTok, nil)
	s["autoRate"].(map[string]any)["healthUrl"] = shop.URL + "/other"
	st, m, _ = e.do("PATCH", path, adminTok, s)
	wantError(t, "a new URL without a test", st, m, http.StatusUnprocessableEntity, "autoRate.enabled")
	s["autoRate"].(map[string]any)["healthUrl"] = shop.URL + "/health"
	s["autoRate"].(map[string]any)["cutPercent"] = 95
	st, m, _ = e.do("PATCH", path, adminTok, s)
	wantError(t, "cutPercent 95", st, m, http.StatusUnprocessableEntity, "autoRate.cutPercent")

	// The audit trail shows the test and the adjustments.
	_, m, _ = e.do("GET", path+"/audit", adminTok, nil)
	var tested, adjusted bool
	for _, a := range m["audit"].([]any) {
		a := a.(map[string]any)
		tested = tested || (a["action"] == "health-check-passed" && a["actor"] == "key:runbook")
		adjusted = adjusted || (a["action"] == "rate-adjust" && a["actor"] == "auto-rate")
	}
	if !tested || !adjusted {
		t.Fatalf("audit: tested %v adjusted %v in %v", tested, adjusted, m["audit"])
	}
}
