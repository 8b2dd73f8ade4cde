package clustertest

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// TestUpgradeFromPreviousRelease builds the previous release
// (deploy/upgrade/previous) and the current tree, starts three members and
// a front on the previous binary, and under a steady load of joins,
// statuses and admissions rolls every node to the new binary, one at a
// time, members first (each drained, stopped gracefully, started again on
// its ports). While the front still runs the previous release, switching a
// room to sold out is refused 409 naming it: the previous release
// announces no features, so it counts as one that would read a sold-out
// room as open. Once every node runs the new binary the switch and a
// scheduled event go through, and no node admits into the sold-out room.
// Then one member goes back to the previous binary: it serves what it can
// read. Every answer of the load is 200 (but for what the previous
// release's own handover answers while one of its members stops: see
// rollLoad.excuse), no number twice, and every token granted before or
// during the roll verifies on every node at the end. It reports the roll's
// duration, the answers by status and the longest pause of a room's joins.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	brokers := brokers(t)
	prev, cur := previousBinary(t), testbin.Binary(t)
	bins := map[string]string{"member1": prev, "member2": prev, "member3": prev, "front": prev}
	c, ports := startFixedCluster(t, brokers, withBinaries(bins))
	front, _ := url.Parse(c.front.base)
	frontPort, _ := strconv.Atoi(front.Port())

	load := []string{"up-a", "up-b"}
	for _, s := range load {
		c.createRoom(c.front, s, 60_000)
	}
	soldID, _ := c.createRoom(c.front, "up-sold", 60_000)
	eventID, _ := c.createRoom(c.front, "up-event", 60)
	// Tickets admitted before the switch to sold out, never exchanged: no
	// node may turn them into tokens afterwards.
	var admitted []string
	for range 5 {
		if j := join(c.front.base, "up-sold"); j.status == 200 && j.admitted {
			admitted = append(admitted, j.ticket)
		}
	}
	if len(admitted) == 0 {
		t.Fatal("no join of up-sold admitted at once")
	}

	l := newRollLoad(load, c.all(), 20*time.Millisecond)
	// Tokens granted by the previous release.
	for range 3 {
		l.visit(c.front, "up-a")
	}
	start := time.Now()
	l.start(6, 5*time.Minute)
	defer func() {
		select {
		case <-l.stop:
		default:
			l.halt()
		}
	}()

	roll := func(p *proc, bin string) *proc {
		t.Helper()
		from := time.Now()
		l.drain(p)
		p.term()
		if bins[p.name] == prev && p.member {
			// Until every node has dropped it (a round of health checks).
			l.excuse(from, time.Now().Add(2*time.Second))
		}
		bins[p.name] = bin
		var q *proc
		if p.member {
			i := memberIndex(c, p)
			q = c.start(p.name, true, ports[i][0], ports[i][1], ports[i][2])
			c.members[i] = q
		} else {
			// startFixedCluster gives the front the ports after the members'.
			q = c.start(p.name, false, frontPort, frontPort+1, 0)
			c.front = q
		}
		q.waitHealthy(60 * time.Second)
		c.waitReady(q, 60*time.Second)
		// The others take it in within a round of health checks.
		time.Sleep(2 * time.Second)
		l.add(q)
		return q
	}
	var steps []string
	for _, m := range append([]*proc{}, c.members...) {
		at := time.Now()
		roll(m, cur)
		steps = append(steps, fmt.Sprintf("%s in %v", m.name, time.Since(at).Round(time.Millisecond)))
	}

	// Every member runs the new binary, the front the previous one.
	// A member that has just read an empty list from a registry that moved
	// refuses naming members with no report yet (it fails closed); once
	// the reports are read again the refusal names the front.
	var st int
	var m map[string]any
	testwait.Poll(30*time.Second, 250*time.Millisecond, func() bool {
		st, m = c.patchSite(c.members[0], soldID, func(s map[string]any) { s["mode"] = "soldOut" })
		return st != 409 || !strings.Contains(messageOf(m), "no report yet")
	})
	if st != 409 || m["error"] != "conflict" || !strings.Contains(messageOf(m), "announces no features") {
		t.Fatalf("sold out while the front runs the previous release: %d %v, want 409 naming the front", st, m)
	}
	t.Logf("while the front runs the previous release: %d %q", st, messageOf(m))

	at := time.Now()
	roll(c.front, cur)
	steps = append(steps, fmt.Sprintf("front in %v", time.Since(at).Round(time.Millisecond)))
	rolled := time.Since(start)
	waitInstances(t, c, func(in map[string]any) bool {
		return in["version"] == release.Version && fmt.Sprint(in["features"]) == "[events modes restore]"
	})

	// Every node runs the new binary: the switch and an event go through
	// (409 until every member has read every node's report).
	refused := c.patchUntilOK(c.members[1], soldID, func(s map[string]any) { s["mode"] = "soldOut" })
	refused += c.patchUntilOK(c.front, eventID, func(s map[string]any) {
		s["events"] = []map[string]any{{"name": "Launch", "startsAt": time.Now().Add(-time.Minute), "endsAt": time.Now().Add(time.Hour), "ratePerMinute": 600}}
	})
	c.checkSoldOut(admitted)
	for _, p := range c.all() {
		if j := join(p.base, "up-event"); j.status != 200 {
			t.Errorf("join of the room with an event through %s: %d %v", p.name, j.status, j.body)
		}
	}

	// One member back to the previous release: it reads every room the new
	// one wrote (the features it lacks an announcement for, it knows).
	at = time.Now()
	back := roll(c.members[2], prev)
	steps = append(steps, fmt.Sprintf("%s back in %v", back.name, time.Since(at).Round(time.Millisecond)))
	waitInstances(t, c, func(in map[string]any) bool {
		if in["publicUrl"] == back.base {
			// The previous release reports no features: absent, null or [].
			fs, _ := in["features"].([]any)
			return in["version"] != release.Version && len(fs) == 0
		}
		return in["version"] == release.Version
	})
	c.checkSoldOut(admitted)
	// Load through the mixed cluster again: every node, the one of the
	// previous release too, answers joins of the load once more.
	mark := time.Now()
	testwait.UntilEvery(t, time.Minute, 50*time.Millisecond, "joins through every node of the mixed cluster", func() bool {
		return l.joinedThroughAll(c.all(), mark, 20)
	})
	l.halt()

	by, pause, where := l.verdict(t)
	l.mu.Lock()
	tokens := l.tokens
	l.mu.Unlock()
	checked := 0
	for i := 0; i < len(tokens); i += max(1, len(tokens)/50) {
		for _, p := range c.all() {
			st, v, err := call(p.base, "GET", "/queue/"+tokens[i].slug+"/verify?token="+url.QueryEscape(tokens[i].token), "", nil)
			if err != nil || st != 200 || v["valid"] != true {
				t.Errorf("token %d of %s does not verify on %s: %d %v %v", i, tokens[i].slug, p.name, st, v, err)
			}
			checked++
		}
	}
	commit, _ := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "upgrade", "previous"))
	t.Logf("upgrade from %.7s: roll of 4 nodes %v (%s), then %d configuration answers 409 before every member knew every node; answers %v; longest pause of a room's joins %v (%s); %d tokens, %d verifications",
		commit, rolled.Round(time.Millisecond), strings.Join(steps, ", "),
		refused, by, pause.Round(time.Millisecond), where, len(tokens), checked)
}

func memberIndex(c *cluster, p *proc) int {
	for i, m := range c.members {
		if m == p {
			return i
		}
	}
	c.t.Fatalf("%s is not a member", p.name)
	return -1
}

// patchSite reads room id through p, changes it and writes it back.
func (c *cluster) patchSite(p *proc, id string, change func(map[string]any)) (int, map[string]any) {
	c.t.Helper()
	st, site, err := call(p.base, "GET", "/api/admin/queue/sites/"+id, c.admin, nil)
	if err != nil || st != 200 {
		c.t.Fatalf("read room %s through %s: %d %v %v", id, p.name, st, site, err)
	}
	change(site)
	st, m, err := call(p.base, "PATCH", "/api/admin/queue/sites/"+id, c.admin, site)
	if err != nil {
		c.t.Fatalf("write room %s through %s: %v", id, p.name, err)
	}
	return st, m
}

// patchUntilOK writes until 200, answering how many 409 it took; any other
// answer fails.
func (c *cluster) patchUntilOK(p *proc, id string, change func(map[string]any)) int {
	c.t.Helper()
	conflicts := -1
	var st int
	var m map[string]any
	written := testwait.Poll(30*time.Second, 250*time.Millisecond, func() bool {
		conflicts++
		st, m = c.patchSite(p, id, change)
		if st != 200 && st != 409 {
			c.t.Fatalf("write room %s through %s: %d %v", id, p.name, st, m)
		}
		return st == 200
	})
	if !written {
		c.t.Fatalf("write room %s through %s: %d %v", id, p.name, st, m)
	}
	return conflicts
}

// checkSoldOut: every node refuses joins into up-sold and admissions of
// tickets admitted before the switch, with the sold-out answer.
func (c *cluster) checkSoldOut(tickets []string) {
	c.t.Helper()
	for _, p := range c.all() {
		if j := join(p.base, "up-sold"); j.status != 410 || j.body["error"] != "sold_out" {
			c.t.Errorf("join of the sold-out room through %s: %d %v, want 410 sold_out", p.name, j.status, j.body)
		}
		for _, tk := range tickets {
			if st, m, _ := call(p.base, "POST", "/queue/up-sold/token", "", map[string]any{"ticket": tk}); st != 410 {
				c.t.Errorf("admission into the sold-out room through %s: %d %v, want 410", p.name, st, m)
			}
		}
	}
}

// waitInstances waits until the instances list holds every node, each as
// ok says.
func waitInstances(t *testing.T, c *cluster, ok func(map[string]any) bool) {
	t.Helper()
	var list []map[string]any
	good := testwait.Poll(30*time.Second, 200*time.Millisecond, func() bool {
		_, list = instancesOf(t, c.front.base, c.admin)
		good := len(list) == len(c.all())
		for _, in := range list {
			good = good && ok(in)
		}
		return good
	})
	if !good {
		t.Fatalf("instances not as expected within 30 s: %v", list)
	}
}
