package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// machine describes where the runner runs, for the results table: the
// target is on loopback, so it is the server's machine too.
func machine() string {
	s := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if m := cpuModel(); m != "" {
		s += ", " + m
	}
	return s + ", " + runtime.GOOS + "/" + runtime.GOARCH
}

// cpuModel reads the processor's name from /proc/cpuinfo (Linux); "" elsewhere.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}
