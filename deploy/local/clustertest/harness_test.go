package clustertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/segmentio/kafka-go"
)

// runID makes this run's topic names unique.
var runID = time.Now().UTC().Format("20060102-150405.000000")

func brokers(t *testing.T) []string {
	t.Helper()
	s := os.Getenv("AQ_KAFKA_BROKERS")
	if s == "" {
		t.Skip("AQ_KAFKA_BROKERS is not set: the cluster tests need a real Kafka broker (deploy/local/kafka.sh start; AQ_KAFKA_BROKERS=127.0.0.1:9092), as deploy/local/test.sh provides")
	}
	return strings.Split(s, ",")
}

// repoRoot is the module's root, three levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) { testbin.Main(m) }

// topics names Kafka topics unique to this run and test, deleted when the
// test ends.
type topics struct{ events, snapshots string }

func newTopics(t *testing.T, brokers []string) topics {
	t.Helper()
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	prefix := fmt.Sprintf("aq-test.%s.%s", runID, name)
	tp := topics{events: prefix + ".events", snapshots: prefix + ".snapshots"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
		if _, err := c.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{tp.events, tp.snapshots}}); err != nil {
			t.Logf("delete test topics: %v", err)
		}
	})
	return tp
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// proc is one running aditus-queue node.
type proc struct {
	t      *testing.T
	name   string
	member bool
	base   string // http://127.0.0.1:port
	cmd    *exec.Cmd
	log    string // path of its output
	done   chan struct{}
	err    error // the exit status, once done is closed
}

// cluster is a set of nodes sharing one broker, topics, master key and
// admin token.
type cluster struct {
	t       *testing.T
	brokers []string
	topics  topics
	admin   string
	key     string
	peers   []string
	members []*proc
	front   *proc
	// prepare, when set, adjusts a node's command before it starts.
	prepare func(name string, cmd *exec.Cmd)
}

// startCluster starts members (roles front,actor) and one front node, and
// waits until every node answers healthz and the front reaches a grain.
func startCluster(t *testing.T, brokers []string, members int, options ...func(*cluster)) *cluster {
	t.Helper()
	c := &cluster{t: t, brokers: brokers, topics: newTopics(t, brokers), admin: "admin-" + randomHex(16), key: randomHex(32)}
	for _, o := range options {
		o(c)
	}
	// One block of ports, every one checked free at once: ports drawn one
	// by one could draw the same port twice.
	type ports struct{ http, remote, health int }
	base := testbin.FreeBlock(t, 3*members+2)
	ps := make([]ports, members)
	for i := range ps {
		ps[i] = ports{base + 3*i, base + 3*i + 1, base + 3*i + 2}
		c.peers = append(c.peers, fmt.Sprintf("127.0.0.1:%d", ps[i].health))
	}
	for i, p := range ps {
		c.members = append(c.members, c.start(fmt.Sprintf("member%d", i+1), true, p.http, p.remote, p.health))
	}
	c.front = c.start("front", false, base+3*members, base+3*members+1, 0)
	for _, p := range c.all() {
		p.waitHealthy(30 * time.Second)
	}
	c.waitReady(c.front, 30*time.Second)
	return c
}

func (c *cluster) all() []*proc { return append(append([]*proc{}, c.members...), c.front) }

// start runs one node; its output goes to a file in the test's directory.
func (c *cluster) start(name string, member bool, httpPort, remotePort, healthPort int) *proc {
	t := c.t
	t.Helper()
	dir := t.TempDir()
	args := []string{"serve", "--addr", fmt.Sprintf("127.0.0.1:%d", httpPort), "--public-url", fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		"--data-dir", filepath.Join(dir, "data"), "--log", "kafka", "--kafka-brokers", strings.Join(c.brokers, ","),
		"--kafka-events-topic", c.topics.events, "--kafka-snapshots-topic", c.topics.snapshots,
		"--admin-token", c.admin, "--cluster-host", "127.0.0.1", "--cluster-port", fmt.Sprint(remotePort),
		"--peers", strings.Join(c.peers, ","), "--ops-addr", "127.0.0.1:0"}
	if member {
		args = append(args, "--roles", "front,actor", "--cluster-health", fmt.Sprintf("127.0.0.1:%d", healthPort))
	} else {
		args = append(args, "--roles", "front")
	}
	p := &proc{t: t, name: name, member: member, base: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(testbin.Binary(t), args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Env = append(os.Environ(), "AQ_MASTER_KEY="+c.key)
	if c.prepare != nil {
		c.prepare(name, p.cmd)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("last lines of %s's output:\n%s", p.name, tail(p.output(), 40))
		}
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) waitHealthy(timeout time.Duration) {
	p.t.Helper()
	healthy := testwait.Poll(timeout, 50*time.Millisecond, func() bool {
		if p.exited() {
			p.t.Fatalf("%s exited during start (%v):\n%s", p.name, p.err, tail(p.output(), 30))
		}
		res, err := httpClient.Get(p.base + "/queue/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	if !healthy {
		p.t.Fatalf("%s did not answer healthz within %v:\n%s", p.name, timeout, tail(p.output(), 30))
	}
}

// waitReady waits until p can reach a grain (the member list has formed).
func (c *cluster) waitReady(p *proc, timeout time.Duration) {
	c.t.Helper()
	waitSitesWithin(c.t, p.base, c.admin, timeout)
}

// waitSitesWithin waits until the node at base answers the list of rooms,
// which it reads from the directory grain.
func waitSitesWithin(t *testing.T, base, admin string, timeout time.Duration) {
	t.Helper()
	var st int
	reached := testwait.Poll(timeout, 100*time.Millisecond, func() bool {
		st, _, _ = call(base, "GET", "/api/admin/queue/sites", admin, nil)
		return st == 200
	})
	if !reached {
		t.Fatalf("%s reached no grain within %v (last status %d)", base, timeout, st)
	}
}

func (p *proc) signal(s syscall.Signal) {
	if !p.exited() {
		_ = p.cmd.Process.Signal(s)
	}
}

// kill ends the process at once (SIGKILL), continuing it first if paused.
func (p *proc) kill() {
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGKILL)
	<-p.done
}

// term stops the process gracefully and waits for it.
func (p *proc) term() {
	p.t.Helper()
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Fatalf("%s did not stop within 30s of SIGTERM", p.name)
	}
}

var activatedLine = regexp.MustCompile(`^time=(\S+) level=INFO msg="room activated" room=(\S+) `)

// host returns the member where room id was activated last, and when.
func (c *cluster) host(id string) (*proc, time.Time) {
	var best *proc
	var at time.Time
	for _, p := range c.members {
		for _, line := range strings.Split(p.output(), "\n") {
			m := activatedLine.FindStringSubmatch(line)
			if m == nil || m[2] != id {
				continue
			}
			ts, err := time.Parse(time.RFC3339Nano, m[1])
			if err == nil && ts.After(at) {
				best, at = p, ts
			}
		}
	}
	return best, at
}

// waitHost waits until room id is active on some member, after since.
func (c *cluster) waitHost(id string, since time.Time, timeout time.Duration) *proc {
	c.t.Helper()
	var host *proc
	activated := testwait.Poll(timeout, 50*time.Millisecond, func() bool {
		p, at := c.host(id)
		host = p
		return p != nil && !at.Before(since.Add(-time.Millisecond))
	})
	if !activated {
		c.t.Fatalf("room %s was not activated after %v within %v", id, since.Format(time.RFC3339Nano), timeout)
	}
	return host
}

var httpClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// call sends a JSON request and decodes a JSON answer.
func call(base, method, path, auth string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &m); err != nil && res.StatusCode != http.StatusNoContent {
		return res.StatusCode, nil, fmt.Errorf("%s %s answered %d with non-JSON %q", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, m, nil
}

// createRoom creates a room through p and returns its id and secret.
func (c *cluster) createRoom(p *proc, slug string, ratePerMinute float64) (id, secret string) {
	c.t.Helper()
	st, m, err := call(p.base, "POST", "/api/admin/queue/sites", c.admin, map[string]any{
		"slug": slug, "name": slug, "targetUrl": "https://shop.example.com/", "ratePerMinute": ratePerMinute, "active": true,
		// Every test visitor joins from loopback.
		"addressBudget": map[string]any{"perMinute": 6000000, "burst": 10000000}})
	if err != nil || st != 201 {
		c.t.Fatalf("create room %s: %d %v %v", slug, st, m, err)
	}
	return m["site"].(map[string]any)["id"].(string), m["secret"].(string)
}

// joined is one join answered.
type joined struct {
	start, end time.Time
	status     int
	number     uint64
	ticket     string
	admitted   bool
	body       map[string]any
	err        error
}

func join(base, slug string) joined {
	j := joined{start: time.Now()}
	j.status, j.body, j.err = call(base, "POST", "/queue/"+slug+"/join", "", nil)
	j.end = time.Now()
	if j.status == 200 && j.err == nil {
		n, _ := j.body["number"].(float64)
		j.number = uint64(n)
		j.ticket, _ = j.body["ticket"].(string)
		j.admitted, _ = j.body["admitted"].(bool)
	}
	return j
}

// joinStream is a bounded stream of joins from several workers, each
// recorded.
type joinStream struct {
	mu       sync.Mutex
	recs     []joined // guarded by mu
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// startJoins sends joins to base from workers goroutines until stopped, for
// at most limit and at most maxJoins joins.
func startJoins(base, slug string, workers int, limit time.Duration, maxJoins int) *joinStream {
	return startPacedJoins(base, slug, workers, limit, maxJoins, 0)
}

// startPacedJoins is startJoins with each worker waiting pace after every
// answer: a stream that must last through a slow fault without reaching
// maxJoins first (the front now answers a few thousand joins a second).
func startPacedJoins(base, slug string, workers int, limit time.Duration, maxJoins int, pace time.Duration) *joinStream {
	s := &joinStream{stop: make(chan struct{})}
	deadline := time.Now().Add(limit)
	for w := 0; w < workers; w++ {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for time.Now().Before(deadline) {
				select {
				case <-s.stop:
					return
				default:
				}
				j := join(base, slug)
				s.mu.Lock()
				if len(s.recs) >= maxJoins {
					s.mu.Unlock()
					return
				}
				s.recs = append(s.recs, j)
				s.mu.Unlock()
				if j.status != 200 {
					time.Sleep(20 * time.Millisecond)
				} else if pace > 0 {
					time.Sleep(pace)
				}
			}
		}()
	}
	return s
}

func (s *joinStream) halt() []joined {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
	return s.snapshot()
}

func (s *joinStream) snapshot() []joined {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]joined(nil), s.recs...)
}

// waitFor waits until cond holds over the stream's records, or fails.
func (s *joinStream) waitFor(t *testing.T, what string, timeout time.Duration, cond func([]joined) bool) {
	t.Helper()
	if !testwait.Poll(timeout, 20*time.Millisecond, func() bool { return cond(s.snapshot()) }) {
		recs := s.snapshot()
		t.Fatalf("%s: not within %v (%d joins recorded, %s)", what, timeout, len(recs), summary(recs))
	}
}

// waitAnswered waits until a join begun after since is answered with
// status, or fails naming what; it returns how long after since the first
// such join was answered.
func (s *joinStream) waitAnswered(t *testing.T, what string, timeout time.Duration, status int, since time.Time) time.Duration {
	t.Helper()
	var took time.Duration
	s.waitFor(t, what, timeout, func(r []joined) bool {
		for _, j := range r {
			if j.status == status && j.start.After(since) {
				took = j.end.Sub(since)
				return true
			}
		}
		return false
	})
	return took
}

// answersSince counts the joins of recs answered with status that began
// after since.
func answersSince(recs []joined, since time.Time, status int) int {
	n := 0
	for _, j := range recs {
		if j.status == status && j.start.After(since) {
			n++
		}
	}
	return n
}

// summary counts answers by status.
func summary(recs []joined) string {
	by := map[string]int{}
	for _, r := range recs {
		k := fmt.Sprint(r.status)
		if r.err != nil {
			k = "error"
		}
		by[k]++
	}
	return fmt.Sprint(by)
}

// checkUnique fails the test if a number was answered twice.
func checkUnique(t *testing.T, recs []joined) (max uint64, n int) {
	t.Helper()
	seen := map[uint64]int{}
	for i, r := range recs {
		if r.status != 200 {
			continue
		}
		if r.number == 0 {
			t.Fatalf("join answered 200 without a number: %v", r.body)
		}
		if j, dup := seen[r.number]; dup {
			t.Fatalf("number %d answered twice (joins %d and %d)", r.number, j, i)
		}
		seen[r.number] = i
		if r.number > max {
			max = r.number
		}
	}
	return max, len(seen)
}
