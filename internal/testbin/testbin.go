// Package testbin serves the tests that run aditus-queue as an operator
// would: it builds the command once for a test package, from the module's
// own folder whatever the package or module the test sits in, and finds the
// free loopback addresses the servers a test starts will listen on.
package testbin

import (
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	mu       sync.Mutex
	built    bool
	binPath  string
	buildErr error
)

// Binary returns the path of the aditus-queue command, built at the first
// call of the test process into a temporary folder (Main removes it) and
// shared by the later calls. A failed build fails every test that asks,
// without building again.
func Binary(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if !built {
		binPath, buildErr = build()
		built = true
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// build runs `go build` in the module's root, so that the command is built
// with the module's own go.mod even for a test in another module.
func build() (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "aditus-queue-testbin")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "aditus-queue")
	cmd := exec.Command("go", "build", "-o", path, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return path, nil
}

// Main runs the package's tests, removes the binary they built, and exits
// with the tests' code: a TestMain of its own for a package that uses
// Binary, or its last line.
func Main(m *testing.M) {
	code := m.Run()
	Remove()
	os.Exit(code)
}

// Remove deletes the binary Binary built, if it built one; a later call
// of Binary builds it again.
func Remove() {
	mu.Lock()
	defer mu.Unlock()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	built, binPath, buildErr = false, "", nil
}

// Root is the folder of the module's go.mod, two levels above this file.
func Root() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("testbin: no source path to find the module's root from")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("testbin: the module's root: %w", err)
	}
	return root, nil
}

// FreePort is a loopback TCP port free at the time of the call, for a
// server that must be told its address before it listens. It is chosen
// below the kernel's ephemeral range (FreeBlock), so an outgoing
// connection of another test cannot take it between the call and the
// server's listen.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreeBlock(t, 1)
}

// firstPort is where FreeBlock starts looking: above the well-known and
// most registered ports.
const firstPort = 20000

// FreeBlock is the first of n consecutive loopback ports, each free at the
// time of the call, chosen at random below the ephemeral range (which the
// kernel gives outgoing connections and port 0 listeners), so that a
// stopped server can be started again on its ports and no outgoing
// connection takes them meanwhile.
func FreeBlock(t testing.TB, n int) int {
	t.Helper()
	low := ephemeralLow()
	if low-n <= firstPort {
		t.Fatalf("no ports below the ephemeral range (it starts at %d)", low)
	}
	for range 100 {
		base := firstPort + mrand.IntN(low-n-firstPort)
		if allFree(base, n) {
			return base
		}
	}
	t.Fatalf("no %d free ports in a row", n)
	return 0
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read).
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				return v
			}
		}
	}
	return 32768
}

func allFree(base, n int) bool {
	for p := base; p < base+n; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		ln.Close()
	}
	return true
}

// FreeAddr is FreePort as host:port on 127.0.0.1.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

// Get sends a GET to url and returns the answer's status and body; a
// request that gets no answer fails t.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
