package clustertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPartitionedMemberLeaves cuts one member of three off the network
// while visitors join through the front node: every packet the member
// sends on loopback is dropped (iptables, matched by the group the member
// runs as, so nothing else on the machine is touched), so it can reach
// neither its peers nor they it, though it runs on. The member must notice
// that it no longer sees a majority and exit, like a stalled one; the other
// two members must stay, and joins through the front must go on, never
// with a number twice. The member still reaches the broker: it must learn
// from the others' heartbeats in the log that they are alive, and end.
func TestPartitionedMemberLeaves(t *testing.T) {
	brokers := brokers(t)
	if os.Geteuid() != 0 {
		t.Skip("the partition test drops a member's packets with iptables and must run as root (deploy/local/test.sh does)")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("the partition test needs iptables (deploy/local/test.sh installs it)")
	}
	gid := uint32(40_000 + rand.IntN(20_000))
	owner := []string{"OUTPUT", "-o", "lo", "-m", "owner", "--gid-owner", fmt.Sprint(gid)}
	iptables := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "iptables", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	c := startCluster(t, brokers, 3, func(c *cluster) {
		c.prepare = func(name string, cmd *exec.Cmd) {
			if name == "member3" {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: gid}}
			}
		}
	})
	cut := c.members[2]
	const slug = "partition"
	c.createRoom(c.front, slug, 6000)
	// About 800 joins a second at most: the stream must outlast the cut's
	// detection and the wait after it (up to 2 minutes) within its cap.
	s := startPacedJoins(c.front.base, slug, 4, 3*time.Minute, 200_000, 5*time.Millisecond)
	defer s.halt()
	s.waitFor(t, "100 joins before the cut", 30*time.Second, func(r []joined) bool { _, n := countOK(r); return n >= 100 })

	// Everything the member sends on loopback is dropped but its own
	// health checks of itself and its traffic with the broker: it still
	// sees itself and the log, as a member cut off from the others by the
	// network does, so it asks the log and finds them alive.
	_, health, _ := strings.Cut(c.peers[2], ":")
	_, kafkaPort, _ := strings.Cut(brokers[0], ":")
	rules := [][]string{
		append(append([]string{}, owner...), "-j", "DROP"),
		append(append([]string{}, owner...), "-p", "tcp", "--dport", health, "-j", "ACCEPT"),
		append(append([]string{}, owner...), "-p", "tcp", "--sport", health, "-j", "ACCEPT"),
		append(append([]string{}, owner...), "-p", "tcp", "--dport", kafkaPort, "-j", "ACCEPT"),
	}
	for _, r := range rules {
		// Inserted at the top in turn: the ACCEPTs stand before the DROP.
		if err := iptables(append([]string{"-I"}, r...)...); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := iptables(append([]string{"-D"}, r...)...); err != nil {
				t.Errorf("removing a rule: %v", err)
			}
		})
	}
	start := time.Now()
	select {
	case <-cut.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the cut-off member still runs 60 s after the cut:\n%s", tail(cut.output(), 30))
	}
	detected := time.Since(start)
	if !strings.Contains(cut.output(), "cut off from the others") || !strings.Contains(cut.output(), "while the log shows them alive") {
		t.Fatalf("the cut-off member exited without saying why (%v):\n%s", cut.err, tail(cut.output(), 30))
	}
	after := time.Now()
	s.waitAnswered(t, "joins answered through the front after the cut", 60*time.Second, 200, after)
	// The majority stays and serves: after the cut-off member's exit each
	// of its members answers writes of its own (a room created through it,
	// and joins into that room), and the front answers a thousand joins
	// more (over a second of the stream), none of them through a member
	// that has gone.
	for i, m := range c.members[:2] {
		own := fmt.Sprintf("%s-%d", slug, i)
		c.createRoom(m, own, 6000)
		for range 20 {
			if j := join(m.base, own); j.status != 200 {
				t.Fatalf("a join through %s of the majority after the cut: %d %v %v", m.name, j.status, j.body, j.err)
			}
		}
	}
	s.waitFor(t, "a thousand joins answered through the front after the cut-off member's exit", 60*time.Second, func(r []joined) bool {
		return answersSince(r, after, 200) >= 1000
	})
	for _, m := range c.members[:2] {
		if m.exited() {
			t.Fatalf("%s of the majority exited (%v):\n%s", m.name, m.err, tail(m.output(), 30))
		}
	}
	recs := s.halt()
	checkUnique(t, recs)
	checkStatuses(t, recs)
	t.Logf("the cut-off member exited %v after the cut; the majority kept serving (%s)", detected.Round(time.Millisecond), summary(recs))
}
