package floor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Wrk is the wrk load generator (a C client), run beside the load client
// as a cross-check: it shows whether the load client, not the server, is
// the limit of a run.
type Wrk struct {
	// Path is the wrk program.
	Path string
	// Threads is wrk's -t (default 2).
	Threads int
}

// WrkResult is what wrk reports of one run.
type WrkResult struct {
	Requests int64
	// Rate is wrk's Requests/sec.
	Rate float64
	// P50 and P99 are from wrk's latency distribution.
	P50, P99 time.Duration
	// Errors counts non-2xx/3xx answers and socket errors.
	Errors int64
}

// FindWrk returns wrk on the PATH, or an error saying it is missing.
func FindWrk() (Wrk, error) {
	p, err := exec.LookPath("wrk")
	if err != nil {
		return Wrk{}, errors.New("wrk is not installed (apt-get install wrk)")
	}
	return Wrk{Path: p, Threads: 2}, nil
}

// Run runs wrk with conns connections for d against url, with method
// (GET or POST without a body).
func (w Wrk) Run(ctx context.Context, method, url string, conns int, d time.Duration) (WrkResult, error) {
	args := w.args(conns, d)
	if method != "GET" {
		dir, err := os.MkdirTemp("", "aq-wrk-")
		if err != nil {
			return WrkResult{}, err
		}
		defer os.RemoveAll(dir)
		script := filepath.Join(dir, "method.lua")
		if err := os.WriteFile(script, []byte("wrk.method = "+strconv.Quote(method)+"\n"), 0o600); err != nil {
			return WrkResult{}, err
		}
		args = append(args, "-s", script)
	}
	return w.run(ctx, append(args, url), d)
}

// args are wrk's threads, connections, duration and latency report.
func (w Wrk) args(conns int, d time.Duration) []string {
	return []string{"-t", strconv.Itoa(max(min(w.Threads, conns), 1)), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(max(int(d.Round(time.Second)/time.Second), 1)) + "s", "--latency"}
}

// run runs wrk with args for a run of d and reads its report.
func (w Wrk) run(ctx context.Context, args []string, d time.Duration) (WrkResult, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, w.Path, args...).CombinedOutput()
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk: %w: %.300s", err, out)
	}
	return ParseWrk(string(out))
}

// ParseWrk reads the figures of wrk's report (run with --latency).
func ParseWrk(out string) (WrkResult, error) {
	var r WrkResult
	var haveRate, haveP99 bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return r, fmt.Errorf("wrk: rate %q", f[1])
			}
			r.Rate, haveRate = v, true
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			d, err := parseWrkDuration(f[1])
			if err != nil {
				return r, err
			}
			if f[0] == "50%" {
				r.P50 = d
			} else {
				r.P99, haveP99 = d, true
			}
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return r, fmt.Errorf("wrk: request count %q", f[0])
			}
			r.Requests = n
		case len(f) == 5 && f[0] == "Non-2xx":
			n, _ := strconv.ParseInt(f[4], 10, 64)
			r.Errors += n
		case len(f) >= 2 && f[0] == "Socket" && f[1] == "errors:":
			// "Socket errors: connect 0, read 1, write 0, timeout 0"
			for i := 3; i < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i], ","), 10, 64)
				r.Errors += n
			}
		}
	}
	if !haveRate || !haveP99 {
		return r, fmt.Errorf("wrk: no rate or latency distribution in its report: %.300s", out)
	}
	return r, nil
}

// parseWrkDuration reads wrk's "812.00us", "1.20ms", "2.01s", "1.00m".
func parseWrkDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				break
			}
			return time.Duration(f * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("wrk: duration %q", s)
}
