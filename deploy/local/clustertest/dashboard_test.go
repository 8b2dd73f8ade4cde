package clustertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// instancesOf lists the nodes base reports, by id, with their roles.
func instancesOf(t *testing.T, base, auth string) (int, []map[string]any) {
	t.Helper()
	st, m, err := call(base, "GET", "/api/admin/queue/instances", auth, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if l, ok := m["instances"].([]any); ok {
		for _, x := range l {
			out = append(out, x.(map[string]any))
		}
	}
	return st, out
}

// TestInstancesAndLiveOnAFront checks that a member and a front report
// themselves through the cluster, that the front serves the live dashboard
// from the grain on the member, and that a node killed without a goodbye
// drops out of the list within 15 s.
func TestInstancesAndLiveOnAFront(t *testing.T) {
	c := startCluster(t, brokers(t), 1)
	id, _ := c.createRoom(c.members[0], "dash", 60)

	// Both nodes appear, on either node's endpoint.
	var list []map[string]any
	waitUntil(t, "the member and the front to report", 15*time.Second, func() bool {
		_, list = instancesOf(t, c.front.base, c.admin)
		return len(list) == 2
	})
	roles := map[string]bool{}
	for i, in := range list {
		for _, k := range []string{"id", "roles", "address", "publicUrl", "version", "startedAt", "uptimeSeconds", "cpuPercent",
			"rssBytes", "heapBytes", "goroutines", "schedLatencyP99Ms", "requestsPerSecond", "webSockets", "reportedAt"} {
			if _, ok := in[k]; !ok {
				t.Fatalf("instance lacks %s: %v", k, in)
			}
		}
		if in["rssBytes"].(float64) <= 0 || in["heapBytes"].(float64) <= 0 || in["goroutines"].(float64) <= 0 {
			t.Fatalf("instance without memory or goroutines: %v", in)
		}
		if i > 0 && list[i-1]["id"].(string) >= in["id"].(string) {
			t.Fatalf("instances not sorted by id: %v", list)
		}
		var rs []string
		for _, r := range in["roles"].([]any) {
			rs = append(rs, r.(string))
		}
		roles[strings.Join(rs, ",")] = true
	}
	if !roles["front,actor"] || !roles["front"] {
		t.Fatalf("roles: got %v, want a member (front,actor) and a front", roles)
	}
	if st, l := instancesOf(t, c.members[0].base, c.admin); st != 200 || len(l) != 2 {
		t.Fatalf("instances on the member: %d %v", st, l)
	}

	// A key of the room is refused with 403.
	st, k, err := call(c.members[0].base, "POST", "/api/admin/queue/sites/"+id+"/keys", c.admin, map[string]any{"name": "ops"})
	if err != nil || st != 201 {
		t.Fatalf("create key: %d %v %v", st, k, err)
	}
	st, m, _ := call(c.front.base, "GET", "/api/admin/queue/instances", k["key"].(string), nil)
	if st != 403 || m["error"] != "forbidden" {
		t.Fatalf("instances with a key: got %d %v, want 403 forbidden", st, m)
	}

	// The front serves the live socket; its sockets count in its report.
	d := websocket.Dialer{Subprotocols: []string{"aditus-queue.v1", "bearer." + c.admin}}
	ws, _, err := d.Dial(strings.Replace(c.front.base, "http", "ws", 1)+"/api/admin/queue/sites/"+id+"/live", nil)
	if err != nil {
		t.Fatalf("live socket on the front: %v", err)
	}
	defer ws.Close()
	for i := 0; i < 3; i++ {
		join(c.front.base, "dash")
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("no frame with the joins on the front's live socket: %v", err)
		}
		var f map[string]any
		if json.Unmarshal(msg, &f) == nil && f["type"] == "stats" && f["issued"] == float64(3) {
			break
		}
	}
	waitUntil(t, "the front to report its dashboard socket", 10*time.Second, func() bool {
		_, l := instancesOf(t, c.members[0].base, c.admin)
		for _, in := range l {
			if len(in["roles"].([]any)) == 1 && in["webSockets"].(float64) >= 1 {
				return true
			}
		}
		return false
	})

	// Killed without a goodbye: the front drops out within 15 s.
	ws.Close()
	killed := time.Now()
	c.front.kill()
	waitUntil(t, "the killed front to drop out", 15*time.Second, func() bool {
		_, l := instancesOf(t, c.members[0].base, c.admin)
		return len(l) == 1 && len(l[0]["roles"].([]any)) == 2
	})
	t.Logf("the killed front dropped out after %v", time.Since(killed).Round(100*time.Millisecond))
}
