package testbin

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// Proc is a running process of the command, its output kept for the test.
type Proc struct {
	Cmd *exec.Cmd
	t   testing.TB
	mu  sync.Mutex
	out bytes.Buffer
}

// Start runs the command with args. `serve` and `proxy` get an operations
// listener on a free port unless args name one (never the shared default
// port). The process is killed when the test ends, and its output logged
// when the test failed.
func Start(t testing.TB, args ...string) *Proc {
	t.Helper()
	if len(args) > 0 && (args[0] == "serve" || args[0] == "proxy") && !slices.Contains(args, "--ops-addr") {
		args = append(args, "--ops-addr", "127.0.0.1:0")
	}
	p := &Proc{t: t, Cmd: exec.Command(Binary(t), args...)}
	pr, pw := io.Pipe()
	p.Cmd.Stdout, p.Cmd.Stderr = pw, pw
	go p.keep(pr)
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		pw.Close()
		if t.Failed() {
			t.Logf("%s output:\n%s", args[0], p.Output())
		}
	})
	return p
}

// keep copies the process's output, line by line, into p.out.
func (p *Proc) keep(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.mu.Lock()
		p.out.WriteString(sc.Text() + "\n")
		p.mu.Unlock()
	}
}

// Output is what the process has printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Kill ends the process at once (SIGKILL) and waits for it, unless it has
// been waited for already.
func (p *Proc) Kill() {
	if p.Cmd.ProcessState == nil {
		_ = p.Cmd.Process.Kill()
		_ = p.Cmd.Wait()
	}
}

// Term stops the process gracefully (SIGTERM) and fails the test when it
// has not stopped within 30 s.
func (p *Proc) Term() {
	p.t.Helper()
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.t.Fatal("the process did not stop on SIGTERM")
	}
}

// Serve runs `serve` on addr (its public URL too) with dataDir and the
// extra flags, waits until it answers its health check, and returns it
// with its base URL.
func Serve(t testing.TB, dataDir, addr string, extra ...string) (*Proc, string) {
	t.Helper()
	base := "http://" + addr
	p := Start(t, append([]string{"serve", "--addr", addr, "--public-url", base, "--data-dir", dataDir}, extra...)...)
	healthy := func() bool {
		res, err := client.Get(base + "/queue/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	if !testwait.Poll(30*time.Second, 50*time.Millisecond, healthy) {
		t.Fatalf("serve did not answer healthz within 30 s:\n%s", p.Output())
	}
	return p, base
}

// client asks the health check with a bound of its own, so that a
// process that accepts and never answers cannot hold the wait.
var client = &http.Client{Timeout: 5 * time.Second}
