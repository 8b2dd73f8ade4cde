package clustertest

import (
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
)

// issued is what visitors hold before a fault: tickets and tokens.
type issued struct {
	tickets map[string]uint64 // ticket → number
	tokens  []string
}

// collect takes the tickets of answered joins, and tokens for a few
// admitted ones.
func (c *cluster) collect(t *testing.T, p *proc, slug string, recs []joined, tokens int) issued {
	t.Helper()
	is := issued{tickets: map[string]uint64{}}
	for _, r := range recs {
		if r.status != 200 {
			continue
		}
		is.tickets[r.ticket] = r.number
		if r.admitted && len(is.tokens) < tokens {
			st, m, err := call(p.base, "POST", "/queue/"+slug+"/token", "", map[string]any{"ticket": r.ticket})
			if err != nil || st != 200 {
				t.Fatalf("token for number %d: %d %v %v", r.number, st, m, err)
			}
			is.tokens = append(is.tokens, m["token"].(string))
		}
	}
	if len(is.tokens) == 0 {
		t.Fatalf("no admitted join among %d to take a token for", len(recs))
	}
	return is
}

// check verifies, through p, that every ticket still names its number and
// every token still verifies, offline with the room's secret and through
// /verify, and that an admitted ticket still gets a token.
func (is issued) check(t *testing.T, p *proc, slug, secret string) {
	t.Helper()
	for tk, n := range is.tickets {
		st, m, err := call(p.base, "GET", "/queue/"+slug+"/status?ticket="+tk, "", nil)
		if err != nil || st != 200 || uint64(m["number"].(float64)) != n {
			t.Fatalf("status of the ticket of number %d after the fault: %d %v %v", n, st, m, err)
		}
	}
	for _, tok := range is.tokens {
		if _, err := token.Verify([]byte(secret), slug, tok, time.Now()); err != nil {
			t.Fatalf("token from before the fault does not verify with the room's secret: %v", err)
		}
		st, m, err := call(p.base, "GET", "/queue/"+slug+"/verify?token="+tok, "", nil)
		if err != nil || st != 200 || m["valid"] != true {
			t.Fatalf("/verify of a token from before the fault: %d %v %v", st, m, err)
		}
	}
	for tk, n := range is.tickets {
		st, m, err := call(p.base, "POST", "/queue/"+slug+"/token", "", map[string]any{"ticket": tk})
		if st == 403 || st == 425 { // not admitted yet: fine, it is a ticket of the line
			continue
		}
		if err != nil || st != 200 {
			t.Fatalf("token for the ticket of number %d after the fault: %d %v %v", n, st, m, err)
		}
		if _, err := token.Verify([]byte(secret), slug, m["token"].(string), time.Now()); err != nil {
			t.Fatalf("token minted after the fault does not verify with the room's secret: %v", err)
		}
		break
	}
}

// TestKillHostDuringJoins kills (SIGKILL) the member hosting a room while
// visitors join through the front node: the room is served again from
// another member, no number is answered twice, and every ticket and token
// issued before the kill stays valid.
func TestKillHostDuringJoins(t *testing.T) {
	c := startCluster(t, brokers(t), 3)
	const slug = "kill-host"
	id, secret := c.createRoom(c.front, slug, 6000)

	s := startJoins(c.front.base, slug, 8, 2*time.Minute, 200_000)
	defer s.halt()
	s.waitFor(t, "300 joins before the kill", 30*time.Second, func(r []joined) bool { _, n := countOK(r); return n >= 300 })
	before := s.snapshot()
	host, _ := c.host(id)
	if host == nil {
		t.Fatal("no member logged the room's activation")
	}
	killed := time.Now()
	host.kill()
	t.Logf("killed %s, the room's host, after %d joins", host.name, len(before))

	failover := s.waitAnswered(t, "a join answered after the kill", time.Minute, 200, killed)
	after := c.waitHost(id, killed, 10*time.Second)
	if after == host {
		t.Fatalf("room re-activated on the killed member %s", host.name)
	}
	// Joins go on on the new host: three hundred answered since the kill.
	s.waitFor(t, "300 joins answered since the kill", time.Minute, func(r []joined) bool { return answersSince(r, killed, 200) >= 300 })
	recs := s.halt()
	max, n := checkUnique(t, recs)
	checkStatuses(t, recs)
	t.Logf("fail-over: %v from the kill to the first join answered by %s; %d numbers answered, none twice (%s)",
		failover.Round(time.Millisecond), after.name, n, summary(recs))

	c.collect(t, c.front, slug, before, 5).check(t, c.front, slug, secret)
	j := join(c.front.base, slug)
	if j.status != 200 || j.number <= max {
		t.Fatalf("join after the fail-over: %d number %d, want above %d", j.status, j.number, max)
	}
}

// TestPausedHostDuringJoins stops the room's member with SIGSTOP while
// visitors join, for longer than the cluster takes to drop it, then lets it
// run again: the others take the room over, the paused member gives up
// when it runs again (its peers have dropped it for good) instead of
// serving the room beside its new host, and no number is answered twice.
func TestPausedHostDuringJoins(t *testing.T) {
	c := startCluster(t, brokers(t), 3)
	const slug = "pause-host"
	id, _ := c.createRoom(c.front, slug, 6000)

	s := startJoins(c.front.base, slug, 8, 2*time.Minute, 200_000)
	defer s.halt()
	s.waitFor(t, "300 joins before the pause", 30*time.Second, func(r []joined) bool { _, n := countOK(r); return n >= 300 })
	host, _ := c.host(id)
	if host == nil {
		t.Fatal("no member logged the room's activation")
	}
	paused := time.Now()
	host.signal(19) // SIGSTOP
	failover := s.waitAnswered(t, "a join answered after the pause", time.Minute, 200, paused)
	after := c.waitHost(id, paused, 30*time.Second)
	if after == host {
		t.Fatalf("room re-activated on the paused member")
	}
	// The new host serves while the old one is still stopped.
	s.waitFor(t, "300 joins answered since the pause", time.Minute, func(r []joined) bool { return answersSince(r, paused, 200) >= 300 })
	host.signal(18) // SIGCONT
	select {
	case <-host.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still runs 30s after it was continued", host.name)
	}
	if out := host.output(); !strings.Contains(out, "did not run for") {
		t.Fatalf("%s exited without saying it stalled:\n%s", host.name, tail(out, 20))
	}
	gone := time.Now()
	s.waitFor(t, "300 joins answered once the paused member is gone", time.Minute, func(r []joined) bool { return answersSince(r, gone, 200) >= 300 })
	recs := s.halt()
	max, n := checkUnique(t, recs)
	checkStatuses(t, recs)
	t.Logf("paused %s; %v from the pause to the first join answered by %s; %d numbers answered, none twice (%s)",
		host.name, failover.Round(time.Millisecond), after.name, n, summary(recs))
	j := join(c.front.base, slug)
	if j.status != 200 || j.number <= max {
		t.Fatalf("join after the pause: %d number %d, want above %d", j.status, j.number, max)
	}
}

func countOK(recs []joined) (max uint64, n int) {
	for _, r := range recs {
		if r.status == 200 {
			n++
			if r.number > max {
				max = r.number
			}
		}
	}
	return max, n
}

// checkStatuses fails on any answer but a number or a 503 with a JSON error.
func checkStatuses(t *testing.T, recs []joined) {
	t.Helper()
	for _, r := range recs {
		switch {
		case r.err != nil:
			t.Fatalf("join failed: %v", r.err)
		case r.status == 200:
		case r.status == 503:
			if _, ok := r.body["error"].(string); !ok {
				t.Fatalf("503 without a JSON error: %v", r.body)
			}
		default:
			t.Fatalf("join answered %d: %v", r.status, r.body)
		}
	}
}
