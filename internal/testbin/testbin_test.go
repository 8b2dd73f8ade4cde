package testbin

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
