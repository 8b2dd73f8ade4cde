package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
)

// TestGeneratedAdminTokenShownOnce checks the first start prints a token
// that works, and a second start does not print it again.
func TestGeneratedAdminTokenShownOnce(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, testbin.FreeAddr(t))
	var tok string
	for _, line := range strings.Split(s.Output(), "\n") {
		if f := strings.TrimSpace(line); strings.HasPrefix(f, "aqa_") {
			tok = f
		}
	}
	if tok == "" {
		t.Fatalf("no admin token printed:\n%s", s.Output())
	}
	if st, _ := s.call("GET", "/api/admin/queue/sites", tok, nil); st != 200 {
		t.Fatalf("generated token refused: %d", st)
	}
	// The README's way in: open /admin/ and sign in with the printed token.
	if res, err := http.Get(s.base + "/admin/"); err != nil || res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("console at /admin/: %v %v", err, res)
	} else {
		res.Body.Close()
	}
	s.Term()
	s2 := startServer(t, dir, testbin.FreeAddr(t))
	if strings.Contains(s2.Output(), tok) || strings.Contains(s2.Output(), "aqa_") {
		t.Fatalf("token printed again on the second start")
	}
	if st, _ := s2.call("GET", "/api/admin/queue/sites", tok, nil); st != 200 {
		t.Fatalf("token refused after restart: %d", st)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "admin-token.sha256")); bytes.Contains(b, []byte(tok)) {
		t.Fatal("admin token stored in clear")
	}
}

// TestKill9KeepsEverything kills the server with SIGKILL during a stream
// of joins and checks that rooms, keys, secrets and every issued number
// survive: numbers continue above every number ever handed out.
func TestKill9KeepsEverything(t *testing.T) {
	dir := t.TempDir()
	const admin = "kill9-admin-token-long-enough"
	s := startServer(t, dir, testbin.FreeAddr(t), "--admin-token", admin)
	created := s.createOnSale(admin)
	id := created["site"].(map[string]any)["id"].(string)
	secret := created["secret"].(string)
	st, key := s.call("POST", "/api/admin/queue/sites/"+id+"/keys", admin, map[string]any{"name": "runbook"})
	if st != 201 {
		t.Fatalf("key: %d %v", st, key)
	}

	var mu sync.Mutex
	var maxSeen float64
	var tickets []string
	stop := make(chan struct{})
	// The kill comes once 50 numbers have been handed out, while the
	// joins go on: a count, not a time, so a slow machine only waits longer.
	const beforeKill = 50
	enough := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := http.Post(s.base+"/queue/onsale/join", "application/json", nil)
				if err != nil {
					return // killed
				}
				var m map[string]any
				_ = json.NewDecoder(res.Body).Decode(&m)
				res.Body.Close()
				if n, ok := m["number"].(float64); ok {
					mu.Lock()
					if n > maxSeen {
						maxSeen = n
					}
					if len(tickets) < 5 {
						tickets = append(tickets, m["ticket"].(string))
					}
					if maxSeen >= beforeKill {
						once.Do(func() { close(enough) })
					}
					mu.Unlock()
				}
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		s.Kill()
		close(stop)
		wg.Wait()
		t.Fatalf("only %v joins in a minute", maxSeen)
	}
	s.Kill()
	close(stop)
	wg.Wait()

	s2 := startServer(t, dir, testbin.FreeAddr(t), "--admin-token", admin)
	s2.joinAbove("kill -9 and a restart", maxSeen)
	// The key, the secret and tickets issued before the crash still work.
	if st, m := s2.call("GET", "/api/admin/queue/sites", key["key"].(string), nil); st != 200 || len(m["sites"].([]any)) != 1 {
		t.Fatalf("API key after restart: %d %v", st, m)
	}
	for _, tk := range tickets {
		if st, m := s2.call("GET", "/queue/onsale/status?ticket="+tk, "", nil); st != 200 {
			t.Fatalf("ticket from before the crash: %d %v", st, m)
		}
	}
	st, g := s2.call("POST", "/queue/onsale/token", "", map[string]any{"ticket": tickets[0]})
	if st != 200 {
		t.Fatalf("token for a ticket from before the crash: %d %v", st, g)
	}
	if _, err := token.Verify([]byte(secret), "onsale", g["token"].(string), time.Now()); err != nil {
		t.Fatalf("token after restart does not verify with the original secret: %v", err)
	}
}

// envWithoutAQ is the environment without the AQ_ twins of the flags.
func envWithoutAQ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AQ_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestBadFlagsAndBusyPort(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--log", "nosuch"},
		{"serve", "--roles", "wizard"},
		{"serve", "--log", "kafka"},
		{"serve", "--nosuchflag"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, testbin.Binary(t), args...)
		cmd.Env = envWithoutAQ() // AQ_KAFKA_BROKERS from the test script would satisfy --log kafka
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			t.Errorf("%v: exit 0, want an error", args)
		}
		if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 {
			t.Errorf("%v: %d lines of output, want one clear line: %s", args, len(lines), out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(testbin.Binary(t), "serve", "--addr", ln.Addr().String(), "--data-dir", t.TempDir(), "--ops-addr", "127.0.0.1:0")
	cmd.Env = envWithoutAQ()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "listen on") {
		t.Fatalf("busy port: err %v, output %s", err, out)
	}
}

// TestReadmeTour runs the README's curl tour, as written, against a fresh
// server (only the host and the token are substituted).
func TestReadmeTour(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the tour needs %s (apt-get install %s)", tool, tool)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- tour -->")
	block, _, ok2 := strings.Cut(rest, "<!-- /tour -->")
	if !ok || !ok2 {
		t.Fatal("README has no tour block")
	}
	script := strings.TrimSpace(block)
	script = strings.TrimPrefix(script, "```sh")
	script = strings.TrimSuffix(script, "```")
	addr := testbin.FreeAddr(t)
	s := startServer(t, t.TempDir(), addr, "--admin-token", "change-me-to-a-long-random-token")
	script = strings.ReplaceAll(script, "http://localhost:8080", s.base)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tour failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"secret":`, `"admitted": true`, `"admitted": false`, "Retry-After:", `"tokenType": "JWT"`, `"valid": true`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tour output lacks %s:\n%s", want, out)
		}
	}
}
