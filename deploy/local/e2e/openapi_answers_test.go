package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/gorilla/websocket"
)

// driveAnswers calls every documented operation for real, successes and
// the errors the contract names, and lets c validate each answer.
func driveAnswers(c *docClient) {
	t := c.t
	const admin = docAdminToken
	sites := "/api/admin/queue/sites"

	// Operations of the node itself.
	c.call(200, "GET", "/queue/healthz", "", nil)

	// Rooms: creation and its refusals.
	room := map[string]any{"slug": "docs", "name": "Spring sale", "targetUrl": "https://shop.example.com/tickets",
		"domains": []string{"shop.example.com"}, "ratePerMinute": 1, "active": true}
	c.call(401, "POST", sites, "", room)
	created := c.call(201, "POST", sites, admin, room)
	if created == nil {
		t.Fatal("cannot go on without a room")
	}
	site := created["site"].(map[string]any)
	id := site["id"].(string)
	c.call(409, "POST", sites, admin, room)
	c.call(400, "POST", sites, admin, "{")
	c.call(413, "POST", sites, admin, `{"name":"`+strings.Repeat("x", 70<<10)+`"}`)
	c.call(422, "POST", sites, admin, map[string]any{"slug": "Not A Slug", "name": "x", "ratePerMinute": 1})

	// Reading and changing a room.
	c.call(200, "GET", sites, admin, nil)
	c.call(200, "GET", sites+"/"+id, admin, nil)
	c.call(404, "GET", sites+"/no-such-room", admin, nil)
	site["message"] = "Doors open at nine."
	c.call(200, "PATCH", sites+"/"+id, admin, site)
	c.call(422, "PATCH", sites+"/"+id, admin, map[string]any{"name": "Spring sale", "ratePerMinute": 0})
	driveEvents(c, sites)
	driveCapacity(c)

	// Empty lists are lists.
	c.call(200, "GET", sites+"/"+id+"/keys", admin, nil)
	c.call(200, "GET", sites+"/"+id+"/bypass-codes", admin, nil)
	c.call(200, "GET", "/api/admin/queue/loadtests", admin, nil)
	c.call(200, "GET", "/api/admin/queue/schedules", admin, nil)
	c.call(200, "GET", sites+"/"+id+"/rate-log", admin, nil)

	// Keys: created once, listed without the key; a key's reach.
	key := c.call(201, "POST", sites+"/"+id+"/keys", admin, map[string]any{"name": "ci"})
	c.call(200, "GET", sites+"/"+id+"/keys", admin, nil)
	qak, _ := key["key"].(string)
	c.call(200, "GET", sites, qak, nil)
	c.call(200, "GET", sites+"/"+id, qak, nil)
	c.call(403, "POST", sites+"/"+id+"/secret", qak, nil)
	c.call(401, "GET", sites, "qak_nobody_nothing", nil)
	c.call(200, "POST", sites+"/"+id+"/secret", admin, nil)

	// Bypass codes.
	code := c.call(201, "POST", sites+"/"+id+"/bypass-codes", admin, map[string]any{"label": "press", "usageLimit": 5})
	codeID, _ := code["id"].(string)
	c.call(200, "GET", sites+"/"+id+"/bypass-codes", admin, nil)
	c.call(200, "PATCH", sites+"/"+id+"/bypass-codes/"+codeID, admin, map[string]any{"disabled": false})
	c.call(422, "PATCH", sites+"/"+id+"/bypass-codes/"+codeID, admin, map[string]any{})

	// The visitor's path through a room admitting one a minute.
	first := c.call(200, "POST", "/queue/docs/join", "", nil)
	second := c.call(200, "POST", "/queue/docs/join", "", map[string]any{})
	t1, _ := first["ticket"].(string)
	t2, _ := second["ticket"].(string)
	c.call(404, "POST", "/queue/no-such-room/join", "", nil)
	c.call(200, "GET", "/queue/docs/status?ticket="+t2, "", nil)
	c.call(404, "GET", "/queue/docs/status?number=99", "", nil)
	c.call(401, "GET", "/queue/docs/status?ticket=forged", "", nil)
	c.call(400, "GET", "/queue/docs/status", "", nil)
	grant := c.call(200, "POST", "/queue/docs/token", "", map[string]any{"ticket": t1})
	c.call(425, "POST", "/queue/docs/token", "", map[string]any{"ticket": t2})
	c.call(401, "POST", "/queue/docs/token", "", map[string]any{"ticket": "forged"})
	c.call(413, "POST", "/queue/docs/token", "", `{"ticket":"`+strings.Repeat("x", 70<<10)+`"}`)
	jwt, _ := grant["token"].(string)
	c.call(200, "GET", "/queue/docs/verify?token="+url.QueryEscape(jwt), "", nil)
	c.call(401, "GET", "/queue/docs/verify?token=forged", "", nil)
	c.call(200, "GET", "/queue/docs/info", "", nil)
	driveDraw(c)
	c.call(204, "POST", "/queue/docs/heartbeat", "", map[string]any{"ticket": t2})
	c.call(200, "POST", "/queue/docs/bypass", "", map[string]any{"code": code["code"]})
	c.call(404, "POST", "/queue/docs/bypass", "", map[string]any{"code": "NOT-A-CODE"})
	// This address's code attempts run out (ten at once): then 429, on both routes.
	for range 8 {
		c.call(404, "POST", "/queue/docs/bypass", "", map[string]any{"code": "NOT-A-CODE"})
	}
	c.call(429, "POST", "/queue/docs/bypass", "", map[string]any{"code": "NOT-A-CODE"})
	c.call(429, "GET", "/queue/docs/enter?code=NOT-A-CODE", "", nil)
	c.call(429, "GET", "/queue/docs/enter?code=NOT-A-CODE", "", nil, "Accept", "text/html")
	c.call(200, "GET", "/queue/docs/pow", "", nil)
	c.call(200, "GET", "/queue/docs", "", nil)
	c.call(404, "GET", "/queue/no-such-room", "", nil)
	c.call(200, "GET", "/queue/docs/embed.js", "", nil)
	c.call(302, "GET", "/queue/docs/enter", "", nil)
	c.call(404, "GET", "/queue/no-such-room/enter", "", nil)
	c.call(302, "HEAD", "/queue/docs/enter", "", nil)
	c.call(404, "HEAD", "/queue/no-such-room/enter", "", nil)
	c.call(403, "GET", "/queue/docs/ws?ticket="+url.QueryEscape(t2), "", nil, "Origin", "https://elsewhere.example.org")
	visitorSocket(c, "/queue/docs/ws", t2)
	c.call(401, "GET", "/queue/docs/ws?ticket=forged", "", nil)
	c.call(200, "GET", sites+"/"+id+"/audit", admin, nil)

	// A room asking for proof of work.
	c.call(201, "POST", sites, admin, map[string]any{"slug": "docs-pow", "name": "Bots beware", "ratePerMinute": 60,
		"pow": map[string]any{"enabled": true, "bits": 8}})
	c.call(200, "GET", "/queue/docs-pow/pow", "", nil)
	c.call(428, "POST", "/queue/docs-pow/join", "", nil)

	// A paused room.
	paused := c.call(201, "POST", sites, admin, map[string]any{"slug": "docs-paused", "name": "Later", "ratePerMinute": 60,
		"targetUrl": "https://shop.example.com/"})
	early := c.call(200, "POST", "/queue/docs-paused/join", "", nil)
	if paused != nil {
		ps := paused["site"].(map[string]any)
		ps["active"] = false
		c.call(200, "PATCH", sites+"/"+ps["id"].(string), admin, ps)
		waitPaused(c, "docs-paused")
		c.call(423, "POST", "/queue/docs-paused/join", "", nil)
		c.call(423, "POST", "/queue/docs-paused/token", "", map[string]any{"ticket": early["ticket"]})
	}

	driveModes(c, sites)

	// The page without JavaScript: the form draws a number kept in a
	// cookie, the page shows it and, the line there, forwards with a token.
	c.call(201, "POST", sites, admin, map[string]any{"slug": "docs-nojs", "name": "No script", "ratePerMinute": 1e6,
		"targetUrl": "https://shop.example.com/"})
	c.call(200, "GET", "/queue/docs-nojs/wait", "", nil)
	if _, h, _ := c.raw("POST", "/queue/docs-nojs/wait", "", nil); h.Get("Set-Cookie") != "" {
		ticket, _, _ := strings.Cut(h.Get("Set-Cookie"), ";")
		c.call(302, "GET", "/queue/docs-nojs/wait", "", nil, "Cookie", ticket)
	}
	c.call(303, "POST", "/queue/docs-nojs/wait", "", nil)
	c.call(404, "GET", "/queue/no-such-room/wait", "", nil)
	c.call(404, "POST", "/queue/no-such-room/wait", "", nil)

	// A room without a target URL: its gateway link cannot forward.
	gone := c.call(201, "POST", sites, admin, map[string]any{"slug": "docs-no-target", "name": "Nowhere", "ratePerMinute": 60})
	c.call(409, "GET", "/queue/docs-no-target/enter", "", nil)
	c.call(409, "GET", "/queue/docs-no-target/enter", "", nil, "Accept", "text/html")

	// The self-regulating rate: a health URL of this test, its test call
	// and the rate log.
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"metrics":{"cpuLoad":0.4}}`))
	}))
	defer shop.Close()
	site["autoRate"] = map[string]any{"enabled": false, "healthUrl": shop.URL + "/health", "minRate": 1, "maxRate": 100,
		"rules": []any{map[string]any{"metric": "responseMs", "op": "<", "value": 5000}, map[string]any{"metric": "metrics.cpuLoad", "op": "<", "value": 0.9}}}
	c.call(200, "PATCH", sites+"/"+id, admin, site)
	c.call(200, "POST", sites+"/"+id+"/health-check/test", qak, nil)
	// With the controller on, an operator's change of the rate is logged.
	site["autoRate"].(map[string]any)["enabled"] = true
	c.call(200, "PATCH", sites+"/"+id, admin, site)
	site["ratePerMinute"] = 3
	c.call(200, "PATCH", sites+"/"+id, qak, site)
	if l := c.call(200, "GET", sites+"/"+id+"/rate-log", qak, nil); l != nil {
		if adj, _ := l["adjustments"].([]any); len(adj) == 0 {
			t.Errorf("rate log after a change of the rate: %v, want an adjustment to validate", l)
		}
	}
	adminSocket(c, "/api/admin/queue/sites/"+id+"/live", qak)
	live := "/api/admin/queue/sites/" + id + "/live"
	socketCloses(c, live, []string{"aditus-queue.v1"}, qak, 0)
	socketCloses(c, live, []string{"aditus-queue.v1", "bearer.not-a-token"}, "", 4401)
	socketCloses(c, "/api/admin/queue/sites/no-such-room/live", []string{"aditus-queue.v1", "bearer." + admin}, "", 4404)

	// The cluster's instances: the operator's only.
	waitInstances(c)
	c.call(403, "GET", "/api/admin/queue/instances", qak, nil)

	// Load tests aim at test rooms only; schedules repeat them.
	test := c.call(201, "POST", sites, admin, map[string]any{"slug": "docs-test", "name": "Rehearsal", "ratePerMinute": 600, "test": true})
	var testID string
	if test != nil {
		testID = test["site"].(map[string]any)["id"].(string)
	}
	// Long enough to be running still when it is stopped below.
	spec := map[string]any{"siteId": testID, "profile": "status", "ratePerSecond": 5, "durationSeconds": 60}
	c.call(422, "POST", "/api/admin/queue/loadtests", admin, map[string]any{"siteId": id, "profile": "status", "ratePerSecond": 5, "durationSeconds": 2})
	c.call(403, "POST", "/api/admin/queue/loadtests", qak, spec)
	run := c.call(201, "POST", "/api/admin/queue/loadtests", admin, spec)
	runID, _ := run["id"].(string)
	c.call(409, "POST", "/api/admin/queue/loadtests", admin, spec)
	adminSocket(c, "/api/admin/queue/loadtests/"+runID+"/live", admin)
	socketCloses(c, "/api/admin/queue/loadtests/"+runID+"/live", []string{"aditus-queue.v1", "bearer." + qak}, "", 4403)
	socketCloses(c, "/api/admin/queue/loadtests/no-such-run/live", []string{"aditus-queue.v1", "bearer." + admin}, "", 4404)
	c.call(200, "GET", "/api/admin/queue/loadtests", admin, nil)
	c.call(422, "GET", "/api/admin/queue/loadtests?limit=0", admin, nil)
	c.call(200, "GET", "/api/admin/queue/loadtests/"+runID, admin, nil)
	c.call(404, "GET", "/api/admin/queue/loadtests/no-such-run", admin, nil)
	c.call(200, "POST", "/api/admin/queue/loadtests/"+runID+"/stop", admin, nil)
	sched := map[string]any{"cron": "0 3 * * *", "siteId": testID, "profile": "status", "ratePerSecond": 5, "durationSeconds": 2}
	created = c.call(201, "POST", "/api/admin/queue/schedules", admin, sched)
	c.call(422, "POST", "/api/admin/queue/schedules", admin, map[string]any{"cron": "every day", "siteId": testID, "profile": "status", "ratePerSecond": 5, "durationSeconds": 2})
	c.call(200, "GET", "/api/admin/queue/schedules", admin, nil)
	schedID, _ := created["id"].(string)
	c.call(204, "DELETE", "/api/admin/queue/schedules/"+schedID, admin, nil)
	c.call(404, "DELETE", "/api/admin/queue/schedules/"+schedID, admin, nil)

	// Removals.
	c.call(204, "DELETE", sites+"/"+id+"/bypass-codes/"+codeID, admin, nil)
	keyID, _ := key["id"].(string)
	c.call(204, "DELETE", sites+"/"+id+"/keys/"+keyID, admin, nil)
	if gone != nil {
		c.call(204, "DELETE", sites+"/"+gone["site"].(map[string]any)["id"].(string), admin, nil)
	}
	c.call(404, "DELETE", sites+"/no-such-room", admin, nil)
}

// driveDraw drives the draw's answers: none, sealed, revealed (the node
// has no beacon: the draw is made with the key alone at the opening).
// driveEvents drives a room with scheduled events: as created and read,
// previewed in its pre-queue and after it, and the refusals.
func driveEvents(c *docClient, sites string) {
	const admin = docAdminToken
	start := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	ev := []map[string]any{
		{"name": "Fan club", "startsAt": start.Add(-time.Hour), "endsAt": start.Add(-30 * time.Minute), "ratePerMinute": 300},
		{"name": "Main sale", "startsAt": start, "endsAt": start.Add(8 * time.Hour), "prequeueFrom": start.Add(-30 * time.Minute),
			"ratePerMinute": 2000, "message": "The main sale.", "pow": map[string]any{"enabled": true, "bits": 12},
			"autoRate": map[string]any{"minRate": 500, "maxRate": 3000}, "mode": "queue", "endMode": "soldOut"},
	}
	created := c.call(201, "POST", sites, admin, map[string]any{"slug": "docs-events", "name": "On-sale day", "ratePerMinute": 100, "events": ev})
	if created == nil {
		return
	}
	id := created["site"].(map[string]any)["id"].(string)
	c.call(200, "GET", sites+"/"+id, admin, nil)
	c.call(200, "GET", sites+"/"+id+"/preview?at="+start.Add(-10*time.Minute).Format(time.RFC3339), admin, nil)
	c.call(200, "GET", sites+"/"+id+"/preview?at="+start.Add(9*time.Hour).Format(time.RFC3339), admin, nil)
	c.call(200, "GET", sites+"/"+id+"/preview", admin, nil)
	c.call(422, "GET", sites+"/"+id+"/preview?at=tomorrow", admin, nil)
	// A write over a version read before another change is refused.
	stale := `"` + created["site"].(map[string]any)["updatedAt"].(string) + `"`
	c.call(200, "PATCH", sites+"/"+id, admin, map[string]any{"name": "On-sale day", "ratePerMinute": 100, "events": ev}, "If-Match", stale)
	c.call(409, "PATCH", sites+"/"+id, admin, map[string]any{"name": "On-sale day", "ratePerMinute": 120, "events": ev}, "If-Match", stale)
	ev[1]["endsAt"] = start.Add(-time.Minute)
	c.call(422, "PATCH", sites+"/"+id, admin, map[string]any{"name": "On-sale day", "ratePerMinute": 100, "events": ev})
}

func driveDraw(c *docClient) {
	c.call(404, "GET", "/queue/docs/draw", "", nil)
	opens := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	c.call(201, "POST", "/api/admin/queue/sites", docAdminToken, map[string]any{"slug": "docs-draw", "name": "Drawn sale",
		"ratePerMinute": 60, "active": true, "opensAt": opens})
	c.call(200, "POST", "/queue/docs-draw/join", "", nil)
	c.call(200, "GET", "/queue/docs-draw/info", "", nil)
	c.call(425, "GET", "/queue/docs-draw/draw", "", nil)
	// The draw is made just after the opening; the call below checks it.
	testwait.Poll(15*time.Second, 50*time.Millisecond, func() bool {
		st, _, _ := c.raw("GET", "/queue/docs-draw/draw", "", nil)
		return st == http.StatusOK
	})
	c.call(200, "GET", "/queue/docs-draw/draw", "", nil)
	c.call(200, "GET", "/queue/docs-draw/info", "", nil)
}

// waitPaused waits until this node's view of slug shows the pause, which
// the grain publishes just after the change is answered.
func waitPaused(c *docClient, slug string) {
	c.t.Helper()
	paused := testwait.Poll(10*time.Second, 20*time.Millisecond, func() bool {
		_, _, b := c.raw("GET", "/queue/"+slug+"/info", "", nil)
		var m map[string]any
		return json.Unmarshal(b, &m) == nil && m["active"] == false
	})
	if !paused {
		c.t.Errorf("the room %s does not show as paused", slug)
	}
}

// driveModes takes a room through its modes and validates what visitors
// get in each.
func driveModes(c *docClient, sites string) {
	created := c.call(201, "POST", sites, docAdminToken, map[string]any{"slug": "docs-modes", "name": "Modes", "ratePerMinute": 1,
		"targetUrl": "https://shop.example.com/"})
	if created == nil {
		return
	}
	site := created["site"].(map[string]any)
	path := sites + "/" + site["id"].(string)
	c.call(200, "POST", "/queue/docs-modes/join", "", nil) // admitted: the burst of one
	waiting := c.call(200, "POST", "/queue/docs-modes/join", "", nil)
	ticket, _ := waiting["ticket"].(string)
	status := "/queue/docs-modes/status?ticket=" + url.QueryEscape(ticket)
	c.call(422, "PATCH", path, docAdminToken, map[string]any{"name": "Modes", "ratePerMinute": 1, "mode": "closed"})

	set := func(mode string) {
		site["mode"] = mode
		c.call(200, "PATCH", path, docAdminToken, site)
		waitMode(c, status, mode)
	}
	jsonApp := []string{"Accept", "application/json"}
	c.call(200, "GET", "/queue/docs-modes", "", nil, jsonApp...)
	c.call(401, "GET", "/queue/docs-modes?ticket=forged", "", nil, jsonApp...)
	c.call(404, "GET", "/queue/no-such-room", "", nil, jsonApp...)
	c.call(404, "GET", "/queue/no-such-room/enter", "", nil, jsonApp...)
	c.call(428, "GET", "/queue/docs-pow", "", nil, jsonApp...)
	c.call(401, "GET", "/queue/docs-modes/enter?ticket=forged", "", nil, jsonApp...)
	for _, code := range []int{202, 429} {
		site["waitingStatus"] = code
		c.call(200, "PATCH", path, docAdminToken, site)
		waitWaiting(c, "/queue/docs-modes?ticket="+url.QueryEscape(ticket), code)
		c.call(code, "GET", "/queue/docs-modes?ticket="+url.QueryEscape(ticket), "", nil, jsonApp...)
		c.call(code, "GET", "/queue/docs-modes/enter?ticket="+url.QueryEscape(ticket), "", nil, jsonApp...)
	}
	set("queueAll")
	c.call(200, "GET", status, "", nil)
	site["soldOutMessage"] = map[string]any{"de": "Ausverkauft.", "en": "Sold out.", "linkUrl": "https://shop.example.com/returns"}
	set("soldOut")
	c.call(410, "POST", "/queue/docs-modes/join", "", nil)
	c.call(410, "GET", status, "", nil)
	c.call(410, "POST", "/queue/docs-modes/token", "", map[string]any{"ticket": ticket})
	c.call(410, "GET", "/queue/docs-modes", "", nil, jsonApp...)
	c.call(410, "GET", "/queue/docs-modes/enter", "", nil, jsonApp...)
	set("maintenance")
	c.call(503, "POST", "/queue/docs-modes/join", "", nil)
	c.call(503, "GET", "/queue/docs-modes", "", nil, jsonApp...)
	c.call(503, "GET", "/queue/docs-modes/enter", "", nil, jsonApp...)
	set("passthrough")
	c.call(200, "POST", "/queue/docs-modes/join", "", nil)
	c.call(200, "GET", "/queue/docs-modes/enter", "", nil, jsonApp...)
}

// waitWaiting waits until the room's JSON answer to path has the status
// code (a waiting status just set).
func waitWaiting(c *docClient, path string, code int) {
	c.t.Helper()
	answered := testwait.Poll(10*time.Second, 20*time.Millisecond, func() bool {
		st, _, _ := c.raw("GET", path, "", nil, "Accept", "application/json")
		return st == code
	})
	if !answered {
		c.t.Errorf("%s does not answer %d", path, code)
	}
}

// waitMode waits until this node's view of the room shows mode in the
// status answer (or the error answer) of status.
func waitMode(c *docClient, status, mode string) {
	c.t.Helper()
	shown := testwait.Poll(10*time.Second, 20*time.Millisecond, func() bool {
		_, _, b := c.raw("GET", status, "", nil)
		var m map[string]any
		return json.Unmarshal(b, &m) == nil && m["mode"] == mode
	})
	if !shown {
		c.t.Errorf("the status %s does not show the mode %s", status, mode)
	}
}

// waitInstances validates the instances answer once this node has reported
// itself (every node reports within about 3 s of starting).
func waitInstances(c *docClient) {
	c.t.Helper()
	// The call below checks the answer, once it lists this node (or fails).
	testwait.Poll(15*time.Second, 200*time.Millisecond, func() bool {
		st, _, b := c.raw("GET", "/api/admin/queue/instances", docAdminToken, nil)
		var m struct {
			Instances []any `json:"instances"`
		}
		return st != http.StatusOK || (json.Unmarshal(b, &m) == nil && len(m.Instances) > 0)
	})
	c.call(200, "GET", "/api/admin/queue/instances", docAdminToken, nil)
}

// visitorSocket opens the room socket with ticket and validates its first
// frame.
func visitorSocket(c *docClient, path, ticket string) {
	c.t.Helper()
	u := "ws" + strings.TrimPrefix(c.base, "http") + path + "?ticket=" + url.QueryEscape(ticket)
	conn, res, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		c.t.Errorf("GET %s: %v (%v)", path, err, res)
		return
	}
	defer conn.Close()
	readFrame(c, conn, path)
}

// adminSocket opens an admin live socket with the token in the protocol
// header and validates its first frame.
func adminSocket(c *docClient, path, token string) {
	c.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"aditus-queue.v1", "bearer." + token}, HandshakeTimeout: 10 * time.Second}
	conn, res, err := d.Dial("ws"+strings.TrimPrefix(c.base, "http")+path, nil)
	if err != nil {
		c.t.Errorf("GET %s: %v (%v)", path, err, res)
		return
	}
	defer conn.Close()
	if got := res.Header.Get("Sec-WebSocket-Protocol"); got != "aditus-queue.v1" {
		c.t.Errorf("GET %s: subprotocol %q, want aditus-queue.v1", path, got)
	}
	readFrame(c, conn, path)
}

func readFrame(c *docClient, conn *websocket.Conn, path string) {
	c.t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, frame, err := conn.ReadMessage()
	if err != nil {
		c.t.Errorf("GET %s: no frame: %v", path, err)
		return
	}
	if err := c.doc.CheckFrame(path, "server", frame); err != nil {
		c.t.Error(err)
	}
}

// checkSecurity holds every admin operation to the security the document
// states: without credentials it answers 401; a room's key gets 403 from
// the operations that name only the admin token, and gets past the
// credentials check of those that name roomKey.
func checkSecurity(c *docClient) {
	c.t.Helper()
	created := c.call(201, "POST", "/api/admin/queue/sites", docAdminToken, map[string]any{"slug": "docs-security", "name": "Guarded", "ratePerMinute": 60})
	if created == nil {
		return
	}
	id := created["site"].(map[string]any)["id"].(string)
	key := c.call(201, "POST", "/api/admin/queue/sites/"+id+"/keys", docAdminToken, map[string]any{"name": "security"})
	qak, _ := key["key"].(string)
	for _, op := range c.doc.Operations() {
		if !strings.HasPrefix(op.Template, "/api/admin/") || op.Socket {
			continue
		}
		path := op.Template
		for _, s := range strings.Split(op.Template, "/") {
			if strings.HasPrefix(s, "{") {
				v := "no-such-item"
				if s == "{id}" && strings.HasPrefix(op.Template, "/api/admin/queue/sites/") {
					v = id
				}
				path = strings.Replace(path, s, v, 1)
			}
		}
		c.call(401, op.Method, path, "", nil)
		if len(op.Schemes) == 0 {
			c.t.Errorf("%s %s: an admin operation without security", op.Method, op.Template)
		}
		if !op.Schemes["roomKey"] {
			c.call(403, op.Method, path, qak, nil)
			continue
		}
		st, h, b := c.raw(op.Method, path, qak, nil)
		if st == http.StatusUnauthorized || st == http.StatusForbidden {
			c.t.Errorf("%s %s: a key of the room got %d, but the document lets roomKey call it (%.200s)", op.Method, op.Template, st, b)
		}
		if err := c.doc.CheckAnswer(op.Method, path, st, h, b); err != nil {
			c.t.Error(err)
		}
	}
}

// socketCloses opens an admin socket with subprotocols and, when auth is
// set, sends it as the first message (validated against the document's
// x-frames.client); it requires the close code the operation's description
// names.
func socketCloses(c *docClient, path string, protocols []string, auth string, want int) {
	c.t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 10 * time.Second}
	conn, res, err := d.Dial("ws"+strings.TrimPrefix(c.base, "http")+path, nil)
	if err != nil {
		c.t.Errorf("GET %s: %v (%v)", path, err, res)
		return
	}
	defer conn.Close()
	if auth != "" {
		msg, _ := json.Marshal(map[string]string{"type": "auth", "token": auth})
		if err := c.doc.CheckFrame(path, "client", msg); err != nil {
			c.t.Error(err)
		}
		_ = conn.WriteMessage(websocket.TextMessage, msg)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, frame, err := conn.ReadMessage()
		if ce, ok := err.(*websocket.CloseError); ok {
			if ce.Code != want {
				c.t.Errorf("GET %s: closed with %d %q, want %d", path, ce.Code, ce.Text, want)
			}
			return
		}
		if err != nil {
			c.t.Errorf("GET %s: %v, want close %d", path, err, want)
			return
		}
		if want == 0 { // authenticated: the first frame is the answer
			if err := c.doc.CheckFrame(path, "server", frame); err != nil {
				c.t.Error(err)
			}
			return
		}
	}
}
