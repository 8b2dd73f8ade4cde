package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// ltServer is one node with its HTTP front on 127.0.0.1:0; the load-test
// runner sends its requests to that front, as it would to a node's public
// URL. hits counts the visitor requests the front answered.
type ltServer struct {
	*env
	node  *node.Node
	close func()
	hs    *httptest.Server
	hits  *atomic.Int64
}

// startLTServer starts a node alone over the embedded log in dir.
func startLTServer(t *testing.T, dir string, lt grain.LoadTestDeps) *ltServer {
	t.Helper()
	l, err := filelog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := startLTNode(t, l, "", nil, lt)
	s.close = func() { l.Close() }
	return s
}

// startLTNode starts a member on l; health and peers place it in a cluster
// of several members (empty: a cluster of its own).
func startLTNode(t *testing.T, l persistence.Log, health string, peers []string, lt grain.LoadTestDeps) *ltServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lt.BaseURL = "http://" + ln.Addr().String()
	n, err := node.Start(node.Config{Member: true, HealthAddr: health, Peers: peers, Deps: grain.Deps{Log: l, Sealer: sealer,
		Hash: sha, Logger: testLogger(), LoadTests: lt}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Node: n.Front, PublicURL: lt.BaseURL, AdminTokenHash: sha(adminTok), Hash: sha, Logger: testLogger(),
		Registry: prometheus.NewRegistry()})
	hits := &atomic.Int64{}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/queue/") {
			hits.Add(1)
		}
		s.Handler().ServeHTTP(w, r)
	}))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	ls := &ltServer{env: &env{t: t, srv: hs}, node: n, close: func() {}, hs: hs, hits: hits}
	t.Cleanup(ls.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := n.Client.List(ctx); err != nil {
		t.Fatalf("the node does not answer: %v", err)
	}
	return ls
}

func (s *ltServer) stop() {
	if s.node == nil {
		return
	}
	s.hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.node.Stop(ctx)
	s.close()
	s.node = nil
}

// kill drops the node as a crash does.
func (s *ltServer) kill() {
	s.hs.Close()
	s.node.Kill()
	s.node = nil
}

func (e *env) createTestRoom(slug string, test bool) string {
	e.t.Helper()
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{
		"slug": slug, "name": "Load " + slug, "targetUrl": "https://shop.example.com/", "domains": []string{"shop.example.com"},
		"ratePerMinute": 100000, "active": true, "test": test,
		// Load tests join from this one address.
		"addressBudget": map[string]any{"perMinute": 6000000, "burst": 10000000}})
	if st != http.StatusCreated {
		e.t.Fatalf("create room: %d %v", st, m)
	}
	site := m["site"].(map[string]any)
	if site["test"] != test {
		e.t.Fatalf("site JSON shows test %v, want %v", site["test"], test)
	}
	return site["id"].(string)
}

// waitRun polls run id until cond holds, for at most 30 s.
func (e *env) waitRun(id string, cond func(map[string]any) bool) map[string]any {
	e.t.Helper()
	var st int
	var m map[string]any
	reached := testwait.Poll(30*time.Second, 200*time.Millisecond, func() bool {
		st, m, _ = e.do("GET", "/api/admin/queue/loadtests/"+id, adminTok, nil)
		return st == http.StatusOK && cond(m)
	})
	if !reached {
		e.t.Fatalf("run %s: condition not reached: %d %v", id, st, m)
	}
	return m
}

func ended(m map[string]any) bool { return m["state"] != "running" }

func dialLive(t *testing.T, base, id string, protocols ...string) (*websocket.Conn, error) {
	t.Helper()
	return dialLiveQuery(t, base, id, "", protocols...)
}

func dialLiveQuery(t *testing.T, base, id, query string, protocols ...string) (*websocket.Conn, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/admin/queue/loadtests/"+id+"/live"+query, nil)
	return conn, err
}

func closeCode(t *testing.T, conn *websocket.Conn) int {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			t.Fatalf("read: %v", err)
		}
	}
}

func TestLoadTestAPI(t *testing.T) {
	dir := t.TempDir()
	s := startLTServer(t, dir, grain.LoadTestDeps{})
	testRoom := s.createTestRoom("load-room", true)
	prodRoom := s.createTestRoom("shop-room", false)
	_, km, _ := s.do("POST", "/api/admin/queue/sites/"+testRoom+"/keys", adminTok, map[string]any{"name": "ci"})
	key := km["key"].(string)

	t.Run("keys are refused on every route", func(t *testing.T) {
		for _, r := range []struct{ method, path string }{
			{"POST", "/api/admin/queue/loadtests"}, {"GET", "/api/admin/queue/loadtests"},
			{"GET", "/api/admin/queue/loadtests/lt1"}, {"POST", "/api/admin/queue/loadtests/lt1/stop"},
			{"POST", "/api/admin/queue/schedules"}, {"GET", "/api/admin/queue/schedules"},
			{"DELETE", "/api/admin/queue/schedules/ls1"},
		} {
			st, m, _ := s.do(r.method, r.path, key, map[string]any{"siteId": testRoom, "profile": "join", "ratePerSecond": 1, "durationSeconds": 1})
			if st != http.StatusForbidden || m["error"] != "forbidden" {
				t.Errorf("%s %s with a key: %d %v, want 403 forbidden", r.method, r.path, st, m)
			}
		}
		conn, err := dialLive(t, s.srv.URL, "lt1", adminws.Subprotocol, "bearer."+key)
		if err != nil {
			t.Fatal(err)
		}
		if code := closeCode(t, conn); code != 4403 {
			t.Errorf("live socket with a key closed %d, want 4403", code)
		}
	})

	t.Run("refused specs name the field", func(t *testing.T) {
		ok := map[string]any{"siteId": testRoom, "profile": "join", "ratePerSecond": 50, "durationSeconds": 3}
		for _, tc := range []struct {
			name, field string
			value       any
		}{
			{"production room", "siteId", prodRoom},
			{"unknown room", "siteId", "rnosuchroom"},
			{"over the rate limit", "ratePerSecond", 5001},
			{"over the duration limit", "durationSeconds", 601},
			{"unknown profile", "profile", "ws"},
		} {
			body := map[string]any{}
			for k, v := range ok {
				body[k] = v
			}
			body[tc.field] = tc.value
			st, m, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok, body)
			if st != http.StatusUnprocessableEntity || m["field"] != tc.field || m["error"] != "invalid" {
				t.Errorf("%s: %d %v, want 422 naming %s", tc.name, st, m, tc.field)
			}
		}
		// A test room left at the default budget (30 a minute after 60)
		// would answer most of a run's joins 429: the run is refused up
		// front, and so is a schedule of it.
		st, m, _ := s.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "narrow-room", "name": "Narrow",
			"targetUrl": "https://shop.example.com/", "domains": []string{"shop.example.com"}, "ratePerMinute": 100000, "test": true})
		if st != http.StatusCreated {
			t.Fatalf("create room: %d %v", st, m)
		}
		narrow := m["site"].(map[string]any)["id"].(string)
		narrowSpec := map[string]any{"siteId": narrow, "profile": "join", "ratePerSecond": 50, "durationSeconds": 3}
		st, m, _ = s.do("POST", "/api/admin/queue/loadtests", adminTok, narrowSpec)
		if msg, _ := m["message"].(string); st != http.StatusUnprocessableEntity || m["field"] != "addressBudget" || m["error"] != "invalid" ||
			!strings.Contains(msg, "raise the room's addressBudget") {
			t.Errorf("run over the default budget: %d %v, want 422 naming addressBudget", st, m)
		}
		narrowSpec["cron"] = "0 3 * * *"
		if st, m, _ := s.do("POST", "/api/admin/queue/schedules", adminTok, narrowSpec); st != http.StatusUnprocessableEntity || m["field"] != "addressBudget" {
			t.Errorf("schedule over the default budget: %d %v, want 422 naming addressBudget", st, m)
		}
		if st, _, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok, `{"siteId":`); st != http.StatusBadRequest {
			t.Errorf("malformed JSON: %d, want 400", st)
		}
	})

	var finishedID string
	t.Run("a run with live frames, to its end", func(t *testing.T) {
		st, run, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok,
			map[string]any{"siteId": testRoom, "profile": "join", "ratePerSecond": 50, "durationSeconds": 3})
		if st != http.StatusCreated || run["state"] != "running" || run["scheduled"] != false {
			t.Fatalf("start: %d %v", st, run)
		}
		id := run["id"].(string)
		finishedID = id
		if st, m, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok,
			map[string]any{"siteId": testRoom, "profile": "status", "ratePerSecond": 5, "durationSeconds": 1}); st != http.StatusConflict {
			t.Errorf("second run while one runs: %d %v, want 409", st, m)
		}
		conn, err := dialLive(t, s.srv.URL, id, adminws.Subprotocol, "bearer."+adminTok)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if conn.Subprotocol() != adminws.Subprotocol {
			t.Errorf("subprotocol %q, want %q", conn.Subprotocol(), adminws.Subprotocol)
		}
		var types []string
		var seconds int
		var end map[string]any
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		for end == nil {
			var f map[string]any
			if err := conn.ReadJSON(&f); err != nil {
				t.Fatalf("live frames %v: %v", types, err)
			}
			types = append(types, f["type"].(string))
			switch f["type"] {
			case "run":
				seconds += len(f["run"].(map[string]any)["series"].([]any))
			case "second":
				seconds++
				if f["run"] != id || f["achievedRate"] == nil || f["p95Ms"] == nil || f["errorRate"] == nil {
					t.Errorf("second frame %v", f)
				}
			case "end":
				end = f["run"].(map[string]any)
			}
		}
		if types[0] != "run" || seconds < 2 {
			t.Errorf("frames %v with %d seconds, want a run frame first and at least 2 seconds", types, seconds)
		}
		if end["state"] != "finished" {
			t.Errorf("end frame %v", end)
		}
		m := s.waitRun(id, ended)
		tot := m["totals"].(map[string]any)
		if m["state"] != "finished" || tot["requests"].(float64) < 100 || tot["ok"].(float64) < 100 || tot["p95Ms"].(float64) <= 0 {
			t.Errorf("finished run %v", m)
		}
		if n := len(m["series"].([]any)); n < 2 {
			t.Errorf("series of %d seconds, want ≥ 2", n)
		}
	})

	t.Run("stop early", func(t *testing.T) {
		_, run, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok,
			map[string]any{"siteId": testRoom, "profile": "mix", "ratePerSecond": 20, "durationSeconds": 60})
		id := run["id"].(string)
		s.waitRun(id, func(m map[string]any) bool { return len(m["series"].([]any)) >= 1 })
		st, m, _ := s.do("POST", "/api/admin/queue/loadtests/"+id+"/stop", adminTok, nil)
		if st != http.StatusOK || m["state"] != "stopped" || m["totals"] == nil {
			t.Fatalf("stop: %d %v", st, m)
		}
		if st, m, _ := s.do("POST", "/api/admin/queue/loadtests/lnosuch/stop", adminTok, nil); st != http.StatusNotFound {
			t.Errorf("stop of an unknown run: %d %v", st, m)
		}
	})

	t.Run("live authentication", func(t *testing.T) {
		conn, err := dialLive(t, s.srv.URL, finishedID, adminws.Subprotocol)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.WriteJSON(map[string]any{"type": "auth", "token": adminTok})
		var f map[string]any
		if err := conn.ReadJSON(&f); err != nil || f["type"] != "run" {
			t.Fatalf("first-message auth: %v %v", f, err)
		}
		if err := conn.ReadJSON(&f); err != nil || f["type"] != "end" {
			t.Fatalf("ended run: %v %v", f, err)
		}
		if code := closeCode(t, conn); code != websocket.CloseNormalClosure {
			t.Errorf("close %d after the end", code)
		}
		for _, tc := range []struct {
			id, token string
			code      int
		}{{finishedID, "wrong", 4401}, {"lnosuch", adminTok, 4404}} {
			conn, err := dialLive(t, s.srv.URL, tc.id, adminws.Subprotocol, "bearer."+tc.token)
			if err != nil {
				t.Fatal(err)
			}
			if code := closeCode(t, conn); code != tc.code {
				t.Errorf("%s with %q: close %d, want %d", tc.id, tc.token, code, tc.code)
			}
		}
		// A token in the query string is not looked at.
		conn, err = dialLiveQuery(t, s.srv.URL, finishedID, "?token="+adminTok+"&access_token="+adminTok, adminws.Subprotocol)
		if err != nil {
			t.Fatal(err)
		}
		if code := closeCode(t, conn); code != 4401 {
			t.Errorf("query-string token: close %d, want 4401", code)
		}
	})

	checkHistory := func(t *testing.T) {
		t.Helper()
		st, m, _ := s.do("GET", "/api/admin/queue/loadtests?limit=1", adminTok, nil)
		runs := m["runs"].([]any)
		if st != http.StatusOK || len(runs) != 1 || runs[0].(map[string]any)["state"] != "stopped" || m["next"] == "" {
			t.Fatalf("first page: %d %v", st, m)
		}
		_, m, _ = s.do("GET", "/api/admin/queue/loadtests?limit=1&before="+m["next"].(string), adminTok, nil)
		runs = m["runs"].([]any)
		if len(runs) != 1 || runs[0].(map[string]any)["id"] != finishedID || m["next"] != "" {
			t.Fatalf("second page: %v", m)
		}
		if st, _, _ := s.do("GET", "/api/admin/queue/loadtests?limit=0", adminTok, nil); st != http.StatusUnprocessableEntity {
			t.Errorf("limit 0: %d, want 422", st)
		}
		got := s.waitRun(finishedID, ended)
		if got["state"] != "finished" || len(got["series"].([]any)) < 2 {
			t.Fatalf("run after restart: %v", got)
		}
	}
	t.Run("history, then again after a restart", func(t *testing.T) {
		checkHistory(t)
		s.stop()
		s = startLTServer(t, dir, grain.LoadTestDeps{})
		checkHistory(t)
	})
}

// TestLoadTestInterruptedByACrash leaves a started run in the log without
// its end, as a node that crashed mid-run does, and starts a node on it.
func TestLoadTestInterruptedByACrash(t *testing.T) {
	dir := t.TempDir()
	l, err := filelog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := &loadtest.Run{ID: "ltcrashed", Spec: loadtest.Spec{SiteID: "rx", Slug: "x", Profile: loadtest.ProfileJoin, RatePerSecond: 10, DurationSeconds: 60},
		State: loadtest.StateRunning, StartedAt: time.Now().UTC()}
	recs := [][]byte{}
	for _, e := range []loadtest.Event{
		{V: 1, Type: loadtest.TypeRunStarted, Run: run},
		{V: 1, Type: loadtest.TypeRunSeconds, RunID: run.ID, Seconds: []loadtest.Second{{Index: 1, Requests: 10, OK: 10, AchievedRate: 10}}},
	} {
		b, _ := json.Marshal(e)
		recs = append(recs, b)
	}
	if _, err := l.Append(context.Background(), protocol.LoadTestsID, recs...); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s := startLTServer(t, dir, grain.LoadTestDeps{})
	m := s.waitRun(run.ID, ended)
	if m["state"] != "interrupted" || m["message"] == "" || len(m["series"].([]any)) != 1 {
		t.Fatalf("crashed run after recovery: %v", m)
	}
	// Nothing runs: a new run may start.
	room := s.createTestRoom("after-crash", true)
	if st, m, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok,
		map[string]any{"siteId": room, "profile": "status", "ratePerSecond": 10, "durationSeconds": 1}); st != http.StatusCreated {
		t.Fatalf("start after recovery: %d %v", st, m)
	}
}

// TestScheduledRunFiresAndIsFlagged runs the scheduler on a clock 120 times
// faster than the wall clock, so an every-minute schedule fires within a
// second; the HTTP path of the runs is real. A room paused after a good
// run makes the scheduled run clearly worse.
func TestScheduledRunFiresAndIsFlagged(t *testing.T) {
	start := time.Now()
	fast := func() time.Time { return start.Add(time.Since(start) * 120) }
	s := startLTServer(t, t.TempDir(), grain.LoadTestDeps{Now: fast, Tick: 100 * time.Millisecond})
	room := s.createTestRoom("sched-room", true)
	prod := s.createTestRoom("sched-shop", false)
	spec := map[string]any{"siteId": room, "profile": "join", "ratePerSecond": 20, "durationSeconds": 2}

	for _, tc := range []struct{ cron, field, site string }{
		{"* * * *", "cron", room}, {"0 0 * * * *", "cron", room}, {"@hourly", "cron", room}, {"* * * * *", "siteId", prod},
	} {
		body := map[string]any{"cron": tc.cron, "siteId": tc.site, "profile": "join", "ratePerSecond": 20, "durationSeconds": 2}
		if st, m, _ := s.do("POST", "/api/admin/queue/schedules", adminTok, body); st != http.StatusUnprocessableEntity || m["field"] != tc.field {
			t.Errorf("schedule %q on %s: %d %v, want 422 naming %s", tc.cron, tc.site, st, m, tc.field)
		}
	}

	// A good manual run of the same spec: the predecessor.
	_, run, _ := s.do("POST", "/api/admin/queue/loadtests", adminTok, spec)
	if good := s.waitRun(run["id"].(string), ended); good["state"] != "finished" || good["totals"].(map[string]any)["errors"].(float64) != 0 {
		t.Fatalf("predecessor: %v", good)
	}
	// Pause the room: every join of the next run is refused (423).
	if st, m, _ := s.do("PATCH", "/api/admin/queue/sites/"+room, adminTok, map[string]any{
		"name": "Load sched-room", "targetUrl": "https://shop.example.com/", "domains": []string{"shop.example.com"},
		"ratePerMinute": 100000, "active": false, "test": true}); st != http.StatusOK {
		t.Fatalf("pause: %d %v", st, m)
	}

	body := map[string]any{"cron": "* * * * *"}
	for k, v := range spec {
		body[k] = v
	}
	st, sc, _ := s.do("POST", "/api/admin/queue/schedules", adminTok, body)
	if st != http.StatusCreated || sc["id"] == nil || sc["cron"] != "* * * * *" {
		t.Fatalf("create schedule: %d %v", st, sc)
	}
	scID := sc["id"].(string)
	_, list, _ := s.do("GET", "/api/admin/queue/schedules", adminTok, nil)
	if n := len(list["schedules"].([]any)); n != 1 {
		t.Fatalf("schedules: %v", list)
	}

	var fired map[string]any
	var page map[string]any
	finished := testwait.Poll(30*time.Second, 200*time.Millisecond, func() bool {
		_, page, _ = s.do("GET", "/api/admin/queue/loadtests?limit=100", adminTok, nil)
		for _, r := range page["runs"].([]any) {
			m := r.(map[string]any)
			if m["scheduled"] == true && m["scheduleId"] == scID && m["state"] == "finished" {
				fired = m
			}
		}
		return fired != nil
	})
	if !finished {
		t.Fatalf("no scheduled run finished: %v", page)
	}
	if st, _, _ := s.do("DELETE", "/api/admin/queue/schedules/"+scID, adminTok, nil); st != http.StatusNoContent {
		t.Errorf("delete schedule: %d", st)
	}
	if st, _, _ := s.do("DELETE", "/api/admin/queue/schedules/"+scID, adminTok, nil); st != http.StatusNotFound {
		t.Errorf("delete again: %d, want 404", st)
	}
	if fired["regression"] != true || !strings.Contains(fmt.Sprint(fired["regressionFigures"]), "errorRate") {
		t.Fatalf("scheduled run against a paused room not flagged: %v", fired)
	}
}

// TestLoadTestsSurviveFailOver kills the member running a load test: the
// other member takes the load-test grain over from the shared log, marks
// the run interrupted with the seconds recorded, and keeps the schedules.
func TestLoadTestsSurviveFailOver(t *testing.T) {
	if raceDetector {
		t.Skip("two members in one process: protoactor's cluster races with itself under the race detector")
	}
	l := memlog.New()
	peers := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	a := startLTNode(t, l, peers[0], peers, grain.LoadTestDeps{FlushSeconds: 1})
	b := startLTNode(t, l, peers[1], peers, grain.LoadTestDeps{FlushSeconds: 1})
	waitMembers(t, a.node, b.node)
	room := a.createTestRoom("failover-room", true)
	if st, m, _ := a.do("POST", "/api/admin/queue/schedules", adminTok, map[string]any{"cron": "0 3 * * *", "siteId": room,
		"profile": "status", "ratePerSecond": 10, "durationSeconds": 5}); st != http.StatusCreated {
		t.Fatalf("schedule: %d %v", st, m)
	}
	_, run, _ := a.do("POST", "/api/admin/queue/loadtests", adminTok,
		map[string]any{"siteId": room, "profile": "join", "ratePerSecond": 20, "durationSeconds": 60})
	id := run["id"].(string)
	a.waitRun(id, func(m map[string]any) bool { return len(m["series"].([]any)) >= 2 })

	host, other := a, b
	if b.hits.Load() > a.hits.Load() {
		host, other = b, a
	}
	host.kill()
	got := other.waitRun(id, ended)
	if got["state"] != "interrupted" || len(got["series"].([]any)) < 2 {
		t.Fatalf("run after the fail-over: %v", got)
	}
	_, list, _ := other.do("GET", "/api/admin/queue/schedules", adminTok, nil)
	if n := len(list["schedules"].([]any)); n != 1 {
		t.Fatalf("schedules after the fail-over: %v", list)
	}
}
