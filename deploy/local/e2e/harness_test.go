package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// TestMain runs the tests from the repository's root (README.md and the
// test data are named from there) and removes the binary the tests built.
func TestMain(m *testing.M) {
	root, err := testbin.Root()
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testbin.Main(m)
}

type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	out  *bytes.Buffer
	mu   sync.Mutex
}

// startServer runs `aditus-queue serve` and waits for healthz.
func startServer(t *testing.T, dataDir, addr string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--addr", addr, "--public-url", "http://" + addr, "--data-dir", dataDir, "--ops-addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(testbin.Binary(t), args...)
	s := &server{t: t, cmd: cmd, base: "http://" + addr, out: &bytes.Buffer{}}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		pw.Close()
		if t.Failed() {
			t.Logf("server output:\n%s", s.output())
		}
	})
	if !testwait.Poll(30*time.Second, 50*time.Millisecond, func() bool { return answers(s.base + "/queue/healthz") }) {
		t.Fatalf("server did not answer healthz:\n%s", s.output())
	}
	return s
}

// answers says whether a GET of url is answered 200.
func answers(url string) bool {
	res, err := http.Get(url)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *server) kill9() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
}

func (s *server) term() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.t.Fatal("server did not stop on SIGTERM")
	}
}

func (s *server) call(method, path, auth string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// get answers a GET of url: its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
