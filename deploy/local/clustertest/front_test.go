package clustertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/gorilla/websocket"
)

// TestFrontAnswersFromPushedViews checks the paths of a front-only node:
// it hosts no grain; its status, info and WebSocket follow changes made
// through other nodes (pushed views); its joins, tokens and admin calls
// reach the grain on whichever member owns the room.
func TestFrontAnswersFromPushedViews(t *testing.T) {
	c := startCluster(t, brokers(t), 3)
	const slug = "front-views"
	id, _ := c.createRoom(c.members[0], slug, 60)

	first := join(c.front.base, slug)
	if first.status != 200 || !first.admitted {
		t.Fatalf("first join through the front: %d %v", first.status, first.body)
	}
	if st, m, err := call(c.front.base, "POST", "/queue/"+slug+"/token", "", map[string]any{"ticket": first.ticket}); err != nil || st != 200 {
		t.Fatalf("token through the front: %d %v %v", st, m, err)
	}
	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(c.front.base, "http", "ws", 1)+"/queue/"+slug+"/ws?ticket="+first.ticket, nil)
	if err != nil {
		t.Fatalf("WebSocket on the front: %v", err)
	}
	defer ws.Close()

	// Joins through the members: the front's status sees them.
	for i := 0; i < 20; i++ {
		if j := join(c.members[i%3].base, slug); j.status != 200 {
			t.Fatalf("join through %s: %d %v", c.members[i%3].name, j.status, j.body)
		}
	}
	// (21 numbers at 60 a minute with 5 s of burst: about 15 wait.)
	waitUntil(t, "the front's info to show the numbers drawn through the members", 5*time.Second, func() bool {
		st, m, _ := call(c.front.base, "GET", "/queue/"+slug+"/info", "", nil)
		return st == 200 && waitingOf(m) >= 10
	})
	if st, m, err := call(c.front.base, "GET", "/queue/"+slug+"/status?ticket="+first.ticket, "", nil); err != nil || st != 200 || m["admitted"] != true {
		t.Fatalf("status on the front: %d %v %v", st, m, err)
	}

	// An admin change through a member reaches the front's sockets.
	st, site, err := call(c.members[1].base, "GET", "/api/admin/queue/sites/"+id, c.admin, nil)
	if err != nil || st != 200 {
		t.Fatalf("get site through member2: %d %v %v", st, site, err)
	}
	site["ratePerMinute"] = 120
	if st, m, err := call(c.members[2].base, "PATCH", "/api/admin/queue/sites/"+id, c.admin, site); err != nil || st != 200 {
		t.Fatalf("rate change through member3: %d %v %v", st, m, err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("no frame with the new rate on the front's socket: %v", err)
		}
		var f map[string]any
		if json.Unmarshal(msg, &f) == nil && f["rate"] == float64(120) {
			break
		}
	}
	// And an admin change through the front reaches the grain.
	site["ratePerMinute"] = 180
	if st, m, err := call(c.front.base, "PATCH", "/api/admin/queue/sites/"+id, c.admin, site); err != nil || st != 200 {
		t.Fatalf("rate change through the front: %d %v %v", st, m, err)
	}
	if st, m, err := call(c.members[0].base, "GET", "/api/admin/queue/sites/"+id, c.admin, nil); err != nil || st != 200 || m["ratePerMinute"] != float64(180) {
		t.Fatalf("rate seen through member1 after the front's change: %d %v %v", st, m, err)
	}
	if strings.Contains(c.front.output(), "room activated") {
		t.Fatalf("the front node activated a grain:\n%s", tail(c.front.output(), 20))
	}
}

func waitingOf(m map[string]any) float64 {
	f, _ := m["waiting"].(float64)
	return f
}

func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, timeout, 50*time.Millisecond, what, cond)
}
