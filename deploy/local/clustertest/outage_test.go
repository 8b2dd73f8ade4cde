package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
)

// privateBroker starts a Kafka broker of the test's own with kafka.sh (its
// own port and data directory), so that stopping it disturbs no other test,
// and stops it when the test ends.
func privateBroker(t *testing.T) (addr string, sh func(verb string)) {
	t.Helper()
	port := testbin.FreeBlock(t, 2)
	env := append(os.Environ(), fmt.Sprintf("AQ_KAFKA_PORT=%d", port), fmt.Sprintf("AQ_KAFKA_CONTROLLER_PORT=%d", port+1),
		"AQ_KAFKA_DATA="+filepath.Join(t.TempDir(), "kafka"))
	sh = func(verb string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot(t), "deploy", "local", "kafka.sh"), verb)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kafka.sh %s: %v\n%s", verb, err, out)
		}
		t.Logf("kafka.sh %s: %s", verb, out)
	}
	sh("start")
	t.Cleanup(func() { sh("stop") })
	return fmt.Sprintf("127.0.0.1:%d", port), sh
}

// TestBrokerOutageDuringJoins stops the Kafka broker while visitors join
// through the front node, then starts it again: meanwhile joins answer
// numbers from blocks reserved before, or 503 with a JSON error, never a
// number twice; once the broker is back, joins succeed again on their own,
// above every number answered before.
func TestBrokerOutageDuringJoins(t *testing.T) {
	brokers(t)
	if os.Getenv("AQ_KAFKA_FAULT_TESTS") != "1" {
		t.Skip("set AQ_KAFKA_FAULT_TESTS=1 to let this test run, stop and start a broker of its own with deploy/local/kafka.sh")
	}
	addr, sh := privateBroker(t)
	c := startCluster(t, []string{addr}, 2)
	const slug = "outage"
	c.createRoom(c.front, slug, 6000)

	s := startJoins(c.front.base, slug, 8, 4*time.Minute, 500_000)
	defer s.halt()
	s.waitFor(t, "300 joins before the outage", 30*time.Second, func(r []joined) bool { _, n := countOK(r); return n >= 300 })
	down := time.Now()
	sh("stop")
	// Stay down until joins have been refused for a while.
	s.waitAnswered(t, "a 503 while the broker is down", time.Minute, 503, down)
	s.waitFor(t, "500 joins refused while the broker is down", time.Minute, func(r []joined) bool { return answersSince(r, down, 503) >= 500 })
	duringMax, _ := countOK(s.snapshot())
	up := time.Now()
	sh("start")
	var resumed time.Duration
	s.waitFor(t, "a join answered after the broker came back", 90*time.Second, func(r []joined) bool {
		for _, j := range r {
			if j.status == 200 && j.end.After(up) && j.number > duringMax {
				resumed = j.end.Sub(up)
				return true
			}
		}
		return false
	})
	s.waitFor(t, "300 joins answered since the broker came back", time.Minute, func(r []joined) bool { return answersSince(r, up, 200) >= 300 })
	recs := s.halt()
	checkUnique(t, recs)
	checkStatuses(t, recs)
	for _, j := range recs {
		if j.status == 200 && j.start.After(up) && j.number <= duringMax {
			t.Fatalf("number %d after the outage, but %d was answered before", j.number, duringMax)
		}
	}
	t.Logf("broker down %v; the first new number %v after kafka.sh start returned (%s)", up.Sub(down).Round(time.Millisecond),
		resumed.Round(time.Millisecond), summary(recs))
	checkFailFast(t, recs, down, up)
}

// checkFailFast asserts that joins refused while the broker was down were
// refused as log_unavailable, quickly: a visitor gets the 503 instead of
// waiting out the call timeout. It logs how long after the stop the first
// 503 came and how long 503 answers took.
func checkFailFast(t *testing.T, recs []joined, down, up time.Time) {
	t.Helper()
	var (
		first        time.Time
		n, logDown   int
		slowest, sum time.Duration
	)
	for _, j := range recs {
		if j.status != 503 || j.start.Before(down) || j.start.After(up) {
			continue
		}
		n++
		if j.body["error"] == "log_unavailable" {
			logDown++
		}
		d := j.end.Sub(j.start)
		sum += d
		slowest = max(slowest, d)
		if first.IsZero() || j.end.Before(first) {
			first = j.end
		}
	}
	if n == 0 {
		t.Fatal("no join was refused while the broker was down")
	}
	t.Logf("fail fast: first 503 %v after the broker stopped; %d answers 503 while down (%d log_unavailable), mean %v, slowest %v",
		first.Sub(down).Round(time.Millisecond), n, logDown, (sum / time.Duration(n)).Round(time.Millisecond), slowest.Round(time.Millisecond))
	if logDown == 0 {
		t.Fatal("no 503 while the broker was down said log_unavailable")
	}
	if slowest > 5*time.Second {
		t.Fatalf("a 503 took %v while the broker was down, want it at once rather than after the call timeout", slowest)
	}
}
