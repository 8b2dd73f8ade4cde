package testbin

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// The command is built once, runs, and is gone after Remove.
func TestBinaryBuildsOnceAndRemoves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	first := Binary(t)
	info, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if second := Binary(t); second != first {
		t.Fatalf("second call built again: %s, then %s", first, second)
	}
	out, err := exec.Command(first, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "aditus-queue") {
		t.Fatalf("version: %v\n%s", err, out)
	}
	if again, _ := os.Stat(first); !again.ModTime().Equal(info.ModTime()) {
		t.Fatal("the binary was rewritten by the second call")
	}
	Remove()
	if _, err := os.Stat(filepath.Dir(first)); !os.IsNotExist(err) {
		t.Fatalf("after Remove the folder is still there: %v", err)
	}
}

// Root is the module's folder, wherever the test runs.
func TestRootHoldsTheModule(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/aditus-queue/aditus-queue\n") {
		t.Fatalf("%s/go.mod: %v\n%.80s", root, err, mod)
	}
}

// FreeAddr names a loopback address a server can listen on at once.
func TestFreeAddrCanBeListenedOn(t *testing.T) {
	addr := FreeAddr(t)
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Fatalf("FreeAddr = %q, want a 127.0.0.1 address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	ln.Close()
}

// TestFreeBlockBelowTheEphemeralRange: the ports are below the range the
// kernel gives outgoing connections, consecutive, and each can be
// listened on.
func TestFreeBlockBelowTheEphemeralRange(t *testing.T) {
	const n = 5
	base := FreeBlock(t, n)
	if base < firstPort || base+n > ephemeralLow() {
		t.Fatalf("FreeBlock = %d..%d, want within [%d, %d)", base, base+n-1, firstPort, ephemeralLow())
	}
	for p := base; p < base+n; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("listen on port %d of the block: %v", p, err)
		}
		ln.Close()
	}
	if p := FreePort(t); p < firstPort || p >= ephemeralLow() {
		t.Fatalf("FreePort = %d, in the ephemeral range", p)
	}
}

// Serve starts serve on the address it is given, answering its health
// check, with an operations listener of its own; Term stops it and the
// output is kept.
func TestServeAnswersAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	addr := FreeAddr(t)
	p, base := Serve(t, t.TempDir(), addr, "--admin-token", "testbin-admin-token-0123456789")
	if base != "http://"+addr {
		t.Fatalf("base %q, want http://%s", base, addr)
	}
	if !slices.Contains(p.Cmd.Args, "--ops-addr") {
		t.Fatalf("serve started without an operations address of its own: %v", p.Cmd.Args)
	}
	res, err := http.Get(base + "/queue/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", res.StatusCode)
	}
	p.Term()
	if p.Cmd.ProcessState == nil || !p.Cmd.ProcessState.Exited() {
		t.Fatalf("after Term the process has not exited: %v", p.Cmd.ProcessState)
	}
	if p.Output() == "" {
		t.Fatal("no output kept")
	}
	p.Kill() // after Term: nothing left to do, and no wait on a waited process
}

// Start leaves an operations address the caller names alone, and Kill
// ends the process.
func TestStartKeepsTheNamedOpsAddr(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	ops := FreeAddr(t)
	p := Start(t, "serve", "--addr", FreeAddr(t), "--data-dir", t.TempDir(), "--ops-addr", ops)
	if n := strings.Count(strings.Join(p.Cmd.Args, " "), "--ops-addr"); n != 1 {
		t.Fatalf("--ops-addr %d times: %v", n, p.Cmd.Args)
	}
	p.Kill()
	if p.Cmd.ProcessState == nil || p.Cmd.ProcessState.Exited() {
		t.Fatalf("after Kill: %v, want ended by a signal", p.Cmd.ProcessState)
	}
}
