package clustertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// rateLog reads a room's adjustments through p, newest first.
func (c *cluster) rateLog(t *testing.T, p *proc, id string) []map[string]any {
	t.Helper()
	st, m, err := call(p.base, "GET", "/api/admin/queue/sites/"+id+"/rate-log", c.admin, nil)
	if err != nil || st != 200 {
		t.Fatalf("rate log: %d %v %v", st, m, err)
	}
	var out []map[string]any
	for _, a := range m["adjustments"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

// TestKillOwnerWhileRegulating kills (SIGKILL) the member that polls a
// room's health: another member takes the room over and goes on polling
// from the rate the room had, read back from Kafka.
func TestKillOwnerWhileRegulating(t *testing.T) {
	b := brokers(t)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"metrics":{"cpuLoad":0.2}}`)
	}))
	defer shop.Close()
	// The shop runs on loopback: the nodes must be allowed to reach it.
	t.Setenv("AQ_ALLOW_PRIVATE_HEALTH_URLS", "true")
	c := startCluster(t, b, 3)
	id, _ := c.createRoom(c.front, "auto-rate", 100)
	path := "/api/admin/queue/sites/" + id
	st, site, err := call(c.front.base, "GET", path, c.admin, nil)
	if err != nil || st != 200 {
		t.Fatalf("get site: %d %v %v", st, site, err)
	}
	site["autoRate"] = map[string]any{"healthUrl": shop.URL + "/health", "minRate": 50, "maxRate": 100000, "intervalSeconds": 5,
		"rules": []map[string]any{{"metric": "metrics.cpuLoad", "op": "<", "value": 0.8}}}
	if st, m, err := call(c.front.base, "PATCH", path, c.admin, site); err != nil || st != 200 {
		t.Fatalf("set the health URL: %d %v %v", st, m, err)
	}
	if st, m, err := call(c.front.base, "POST", path+"/health-check/test", c.admin, nil); err != nil || st != 200 || m["ok"] != true {
		t.Fatalf("test call: %d %v %v", st, m, err)
	}
	site["autoRate"].(map[string]any)["enabled"] = true
	if st, m, err := call(c.front.base, "PATCH", path, c.admin, site); err != nil || st != 200 {
		t.Fatalf("enable: %d %v %v", st, m, err)
	}
	testwait.UntilEvery(t, 40*time.Second, 500*time.Millisecond, "two adjustments of the rate", func() bool {
		return len(c.rateLog(t, c.front, id)) >= 2
	})
	host, _ := c.host(id)
	if host == nil {
		t.Fatal("no member logged the room's activation")
	}
	killed := time.Now()
	host.kill()
	t.Logf("killed %s, the room's owner", host.name)

	// Polling goes on from another member: the first adjustment after the
	// kill starts from the rate of the last one before it.
	var first, last map[string]any
	adjusted := testwait.Poll(60*time.Second, 500*time.Millisecond, func() bool {
		first, last = nil, nil
		for _, a := range c.rateLog(t, c.front, id) { // newest first
			at, err := time.Parse(time.RFC3339Nano, a["at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if at.After(killed) {
				first = a
			} else if last == nil {
				last = a
			}
		}
		return first != nil
	})
	if !adjusted {
		t.Fatalf("no adjustment after the kill within 60s: %v", c.rateLog(t, c.front, id))
	}
	if first["from"] != last["to"] || first["to"].(float64) <= first["from"].(float64) {
		t.Fatalf("after the fail-over: %v, before it: %v; want a rise from the rate the room had", first, last)
	}
	after := c.waitHost(id, killed, 10*time.Second)
	if after == host {
		t.Fatalf("the room is polled by the killed member %s", host.name)
	}
	t.Logf("%s goes on from %v/min (%v after the kill)", after.name, last["to"], time.Since(killed).Round(time.Second))
	st, site, _ = call(c.front.base, "GET", path, c.admin, nil)
	if st != 200 || site["ratePerMinute"].(float64) <= 100 {
		t.Fatalf("site after the fail-over: %d %v", st, site)
	}
}
