package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// sealer is the real cipher under a fixed test key.
var sealer = nodetest.Sealer

func sha(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

const adminTok = "test-admin-token"

type env struct {
	t   *testing.T
	srv *httptest.Server
	// registry holds the server's metrics.
	registry *prometheus.Registry
}

func newEnv(t *testing.T) *env { return newEnvWith(t, func(*grain.Deps, *Config) {}) }

// newEnvOn is newEnv on the given log.
func newEnvOn(t *testing.T, l persistence.Log) *env {
	t.Helper()
	return newEnvWith(t, func(d *grain.Deps, _ *Config) { d.Log = l })
}

// newEnvWith is newEnv with the node's deps and the server's config
// changed by edit before they start.
func newEnvWith(t *testing.T, edit func(*grain.Deps, *Config)) *env {
	t.Helper()
	return newEnvWithNode(t, edit, nil)
}

// newEnvWithNode is newEnvWith with the node's configuration changed by
// editNode (nil: none) too.
func newEnvWithNode(t *testing.T, edit func(*grain.Deps, *Config), editNode func(*node.Config)) *env {
	t.Helper()
	log := testLogger()
	deps := grain.Deps{Log: memlog.New(), Sealer: sealer, Hash: sha, Logger: log}
	cfg := Config{PublicURL: "http://queue.test", AdminTokenHash: sha(adminTok), Hash: sha, Logger: log,
		Registry: prometheus.NewRegistry()}
	edit(&deps, &cfg)
	nc := node.Config{Member: true, Deps: deps}
	if editNode != nil {
		editNode(&nc)
	}
	cfg.Node = nodetest.Start(t, nc).Front
	srv := httptest.NewServer(New(cfg).Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, registry: cfg.Registry}
}

// do sends a request and decodes a JSON answer into a map.
func (e *env) do(method, path, auth string, body any, hdr ...string) (int, map[string]any, http.Header) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, m, res.Header
}

func (e *env) createRoom(slug string, rate float64) (id, secret string) {
	e.t.Helper()
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{
		"slug": slug, "name": "Sale " + slug, "targetUrl": "https://shop.example.com/tickets",
		"domains": []string{"shop.example.com"}, "ratePerMinute": rate, "active": true})
	if st != http.StatusCreated {
		e.t.Fatalf("create room: %d %v", st, m)
	}
	return m["site"].(map[string]any)["id"].(string), m["secret"].(string)
}

func TestVisitorFlow(t *testing.T) {
	e := newEnv(t)
	_, secret := e.createRoom("spring", 1)

	st, j, _ := e.do("POST", "/queue/spring/join", "", nil)
	if st != 200 || j["admitted"] != true || j["number"].(float64) != 1 || j["ticket"] == "" {
		t.Fatalf("first join: %d %v", st, j)
	}
	ticket := j["ticket"].(string)
	st, j2, _ := e.do("POST", "/queue/spring/join", "", map[string]any{})
	if st != 200 || j2["admitted"] != false || j2["number"].(float64) != 2 || j2["ahead"].(float64) != 0 {
		t.Fatalf("second join at 1/min: %d %v", st, j2)
	}
	for _, k := range []string{"queue", "name", "number", "serving", "ahead", "admitted", "estimatedWaitSeconds", "retryAfterSeconds", "ticket"} {
		if _, ok := j2[k]; !ok {
			t.Errorf("join answer lacks %s", k)
		}
	}
	st, s, h := e.do("GET", "/queue/spring/status?ticket="+j2["ticket"].(string), "", nil)
	if st != 200 || s["admitted"] != false || s["active"] != true || h.Get("Retry-After") == "" {
		t.Fatalf("status: %d %v %v", st, s, h)
	}
	if st, _, _ := e.do("GET", "/queue/spring/status?number=2", "", nil); st != 200 {
		t.Fatalf("status by bare number: %d", st)
	}
	if st, m, _ := e.do("GET", "/queue/spring/status?number=99", "", nil); st != 404 || m["error"] != "not_found" {
		t.Fatalf("status of a number never issued: %d %v", st, m)
	}
	if st, m, _ := e.do("GET", "/queue/spring/status?ticket=forged", "", nil); st != 401 {
		t.Fatalf("forged ticket: %d %v", st, m)
	}

	st, g, _ := e.do("POST", "/queue/spring/token", "", map[string]any{"ticket": ticket})
	if st != 200 || g["tokenType"] != "JWT" || g["targetUrl"] != "https://shop.example.com/tickets" || g["expiresInSeconds"].(float64) < 590 {
		t.Fatalf("token: %d %v", st, g)
	}
	if _, err := token.Verify([]byte(secret), "spring", g["token"].(string), time.Now()); err != nil {
		t.Fatalf("token does not verify with the room's secret: %v", err)
	}
	if st, m, _ := e.do("POST", "/queue/spring/token", "", map[string]any{"ticket": j2["ticket"]}); st != 425 || m["error"] != "too_early" {
		t.Fatalf("token before admission: %d %v", st, m)
	}
	if st, m, _ := e.do("POST", "/queue/spring/token", "", map[string]any{"number": 1}); st != 401 {
		t.Fatalf("token by bare number where the room does not allow it: %d %v", st, m)
	}
	if st, m, _ := e.do("GET", "/queue/spring/verify?token="+g["token"].(string), "", nil); st != 200 || m["valid"] != true || m["number"].(float64) != 1 {
		t.Fatalf("verify: %d %v", st, m)
	}
	if st, m, _ := e.do("GET", "/queue/spring/verify?token=x.y.z", "", nil); st != 401 || m["valid"] != false {
		t.Fatalf("verify bad token: %d %v", st, m)
	}
	if st, m, _ := e.do("GET", "/queue/spring/info", "", nil); st != 200 || m["active"] != true || m["waiting"].(float64) != 1 {
		t.Fatalf("info: %d %v", st, m)
	}
	if st, _, _ := e.do("POST", "/queue/spring/heartbeat", "", map[string]any{"ticket": ticket}); st != 204 {
		t.Fatalf("heartbeat: %d", st)
	}
	if st, m, _ := e.do("GET", "/queue/healthz", "", nil); st != 200 || m["status"] != "ok" {
		t.Fatalf("healthz: %d %v", st, m)
	}
}

func TestVisitorErrors(t *testing.T) {
	e := newEnv(t)
	id, _ := e.createRoom("errs", 60)
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"unknown room join", "POST", "/queue/nope/join", nil, 404, "not_found"},
		{"unknown room status", "GET", "/queue/nope/status?number=1", nil, 404, "not_found"},
		{"malformed json", "POST", "/queue/errs/join", "{not json", 400, "bad_request"},
		{"too large", "POST", "/queue/errs/join", `{"x":"` + strings.Repeat("a", 70<<10) + `"}`, 413, "too_large"},
		{"status without ticket", "GET", "/queue/errs/status", nil, 400, "bad_request"},
		{"token without ticket", "POST", "/queue/errs/token", map[string]any{}, 400, "bad_request"},
		{"unknown route", "GET", "/nothing/here", nil, 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, _ := e.do(tc.method, tc.path, "", tc.body)
			if st != tc.status || m["error"] != tc.code || m["message"] == "" {
				t.Fatalf("got %d %v, want %d %s", st, m, tc.status, tc.code)
			}
		})
	}
	// Paused: join and token answer 423 with a reason.
	_, site, _ := e.do("GET", "/api/admin/queue/sites/"+id, adminTok, nil)
	site["active"] = false
	if st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, site); st != 200 || m["active"] != false {
		t.Fatalf("pause: %d %v", st, m)
	}
	if st, m, _ := e.do("POST", "/queue/errs/join", "", nil); st != 423 || m["error"] != "paused" {
		t.Fatalf("join while paused: %d %v", st, m)
	}
}

func TestAdminAPI(t *testing.T) {
	e := newEnv(t)
	id, _ := e.createRoom("admin-a", 100)
	otherID, _ := e.createRoom("admin-b", 100)

	if st, m, _ := e.do("GET", "/api/admin/queue/sites", "", nil); st != 401 || m["error"] != "unauthorized" {
		t.Fatalf("no credentials: %d %v", st, m)
	}
	if st, _, _ := e.do("GET", "/api/admin/queue/sites", "wrong", nil); st != 401 {
		t.Fatalf("wrong token: %d", st)
	}
	if st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "admin-a", "name": "x", "ratePerMinute": 1}); st != 409 {
		t.Fatalf("slug taken: %d %v", st, m)
	}
	for _, tc := range []struct {
		field string
		value any
	}{{"ratePerMinute", 0}, {"accentColor", "red"}, {"domains", []string{"https://x.com/path"}}, {"tokenTtlSeconds", 5}} {
		body := map[string]any{"slug": "bad-" + strings.ToLower(tc.field), "name": "x", "ratePerMinute": 10}
		body[tc.field] = tc.value
		st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, body)
		if st != 422 || m["field"] != tc.field {
			t.Errorf("invalid %s: got %d %v, want 422 naming the field", tc.field, st, m)
		}
	}
	st, list, _ := e.do("GET", "/api/admin/queue/sites", adminTok, nil)
	if st != 200 || len(list["sites"].([]any)) != 2 {
		t.Fatalf("list: %d %v", st, list)
	}

	// API keys: shown once, scoped to their room.
	st, k, _ := e.do("POST", "/api/admin/queue/sites/"+id+"/keys", adminTok, map[string]any{"name": "runbook"})
	if st != 201 || !strings.HasPrefix(k["key"].(string), "qak_") {
		t.Fatalf("key create: %d %v", st, k)
	}
	key := k["key"].(string)
	_, keys, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/keys", adminTok, nil)
	if b, _ := json.Marshal(keys); strings.Contains(string(b), key) {
		t.Fatalf("key listing shows the key again: %s", b)
	}
	st, mine, _ := e.do("GET", "/api/admin/queue/sites", key, nil)
	if st != 200 || len(mine["sites"].([]any)) != 1 || mine["sites"].([]any)[0].(map[string]any)["id"] != id {
		t.Fatalf("key list: %d %v", st, mine)
	}
	site := mine["sites"].([]any)[0].(map[string]any)
	site["ratePerMinute"] = 300
	site["slug"] = "ignored"
	if st, m, _ := e.do("PATCH", "/api/admin/queue/sites/"+id, key, site); st != 200 || m["ratePerMinute"].(float64) != 300 || m["slug"] != "admin-a" {
		t.Fatalf("key patch: %d %v", st, m)
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/admin/queue/sites/" + otherID},
		{"PATCH", "/api/admin/queue/sites/" + otherID},
		{"DELETE", "/api/admin/queue/sites/" + id},
		{"POST", "/api/admin/queue/sites"},
		{"POST", "/api/admin/queue/sites/" + id + "/secret"},
		{"GET", "/api/admin/queue/sites/" + id + "/keys"},
		{"GET", "/api/admin/queue/sites/" + id + "/audit"},
		{"GET", "/api/admin/queue/instances"},
	} {
		if st, m, _ := e.do(tc.method, tc.path, key, map[string]any{}); st != 403 {
			t.Errorf("%s %s with a key: got %d %v, want 403", tc.method, tc.path, st, m)
		}
	}
	if st, _, _ := e.do("GET", "/api/admin/queue/sites", "qak_"+id+"_forged", nil); st != 401 {
		t.Fatalf("forged key: %d", st)
	}

	// Secret rotation: the new secret is shown once and signs new tokens.
	st, sec, _ := e.do("POST", "/api/admin/queue/sites/"+id+"/secret", adminTok, nil)
	if st != 200 || sec["secret"] == "" {
		t.Fatalf("rotate: %d %v", st, sec)
	}
	_, j, _ := e.do("POST", "/queue/admin-a/join", "", nil)
	_, g, _ := e.do("POST", "/queue/admin-a/token", "", map[string]any{"ticket": j["ticket"]})
	if _, err := token.Verify([]byte(sec["secret"].(string)), "admin-a", g["token"].(string), time.Now()); err != nil {
		t.Fatalf("token after rotation: %v (%v)", err, g)
	}

	st, audit, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/audit", adminTok, nil)
	if st != 200 {
		t.Fatalf("audit: %d", st)
	}
	b, _ := json.Marshal(audit)
	for _, want := range []string{`"action":"create","actor":"admin"`, `"key:runbook"`, "rotate-secret", "add-key"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("audit lacks %s: %s", want, b)
		}
	}

	if st, _, _ := e.do("DELETE", "/api/admin/queue/sites/"+otherID, adminTok, nil); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	if st, _, _ := e.do("GET", "/api/admin/queue/sites/"+otherID, adminTok, nil); st != 404 {
		t.Fatalf("get deleted: %d", st)
	}
	waitFor(t, 5*time.Second, "a join of the deleted room answered 404", func() bool {
		st, _, _ := e.do("POST", "/queue/admin-b/join", "", nil)
		return st == 404
	})
	if st, _, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "admin-b", "name": "again", "ratePerMinute": 5}); st != 201 {
		t.Fatalf("re-create a deleted slug: %d", st)
	}
}

func TestCORSOnlyForRoomDomains(t *testing.T) {
	e := newEnv(t)
	e.createRoom("cors", 60)
	_, _, h := e.do("GET", "/queue/cors/info", "", nil, "Origin", "https://shop.example.com")
	if h.Get("Access-Control-Allow-Origin") != "https://shop.example.com" {
		t.Fatalf("room domain not allowed: %v", h)
	}
	_, _, h = e.do("GET", "/queue/cors/info", "", nil, "Origin", "https://evil.example.net")
	if h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign origin allowed: %v", h)
	}
	st, _, h := e.do("OPTIONS", "/queue/cors/join", "", nil, "Origin", "https://shop.example.com", "Access-Control-Request-Method", "POST")
	if st != 204 || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight: %d %v", st, h)
	}
}

func TestGatewayEnter(t *testing.T) {
	e := newEnv(t)
	e.createRoom("gate", 1)
	st, _, h := e.do("GET", "/queue/gate/enter", "", nil)
	loc := h.Get("Location")
	if st != 302 || !strings.HasPrefix(loc, "https://shop.example.com/tickets?aditus_queue_token=") {
		t.Fatalf("first visitor through the gateway: %d %s", st, loc)
	}
	st, _, h = e.do("GET", "/queue/gate/enter?return="+urlQuery("https://shop.example.com/event/42"), "", nil)
	loc = h.Get("Location")
	if st != 302 || !strings.HasPrefix(loc, "http://queue.test/queue/gate?") || !strings.Contains(loc, "ticket=") || !strings.Contains(loc, "return=") {
		t.Fatalf("second visitor at 1/min: %d %s", st, loc)
	}
	st, _, h = e.do("GET", "/queue/gate/enter?return="+urlQuery("https://evil.com/"), "", nil)
	if loc := h.Get("Location"); strings.Contains(loc, "evil") {
		t.Fatalf("foreign return URL followed: %d %s", st, loc)
	}
}

// The shop gets its return URL back as it wrote it: its parameters in
// their order and encoding (a signed query would break otherwise), the
// token last, a stale token dropped.
func TestGatewayKeepsTheReturnURLsQuery(t *testing.T) {
	e := newEnv(t)
	e.createRoom("gate", 1)
	ret := "https://shop.example.com/event/42?z=1&b=%20x+y&aditus_queue_token=stale&a=%41"
	st, _, h := e.do("GET", "/queue/gate/enter?return="+urlQuery(strings.NewReplacer("%", "%25", "+", "%2B").Replace(ret)), "", nil)
	loc := h.Get("Location")
	want := "https://shop.example.com/event/42?z=1&b=%20x+y&a=%41&aditus_queue_token="
	if st != 302 || !strings.HasPrefix(loc, want) || strings.Contains(loc, "stale") {
		t.Fatalf("admitted at once: %d %s, want %s<token>", st, loc, want)
	}
}

func urlQuery(s string) string {
	return strings.NewReplacer(":", "%3A", "/", "%2F", "?", "%3F", "&", "%26", "=", "%3D").Replace(s)
}
