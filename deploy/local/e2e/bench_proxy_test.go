package e2e

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
)

// TestBenchProxy runs `aditus-queue bench proxy` for one short round: the
// bare upstream, nginx and the capacity proxy on both upstream clients
// behind both visitor servers each answer wrk without an error, their CPU time is read, and the
// medians name every target.
func TestBenchProxy(t *testing.T) {
	for _, p := range []string{"wrk", "nginx"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed (deploy/local/test.sh installs it)", p)
		}
	}
	out, err := exec.Command(testbin.Binary(t), "bench", "proxy", "--rounds", "1", "--duration", "1s", "--connections", "4").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run := regexp.MustCompile(`(?m)^round 1  (\S+)\s+(\d+) req/s .* CPU\s+([0-9.]+) µs/request  errors (\d+)$`)
	seen := map[string]bool{}
	for _, m := range run.FindAllStringSubmatch(string(out), -1) {
		rate, _ := strconv.Atoi(m[2])
		cpu, _ := strconv.ParseFloat(m[3], 64)
		if rate == 0 || cpu == 0 || m[4] != "0" {
			t.Errorf("%s: %s req/s, %s µs CPU a request, %s errors", m[1], m[2], m[3], m[4])
		}
		seen[m[1]] = true
	}
	for _, name := range []string{"direct", "nginx", "proxy-fast", "proxy-std", "proxy-fast-nethttp", "proxy-std-nethttp"} {
		if !seen[name] || !regexp.MustCompile(`(?m)^`+name+` .*×[0-9.]+ req/s`).MatchString(string(out)) {
			t.Errorf("no run or median of %s", name)
		}
	}
	if t.Failed() || !strings.Contains(string(out), "ratios to nginx") {
		t.Fatalf("output:\n%s", out)
	}
}
