package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/floor"
)

const proxySynopsis = `Usage: aditus-queue bench proxy [flags]

Measures the capacity proxy (aditus-queue proxy) against nginx with wrk, in
one run. A bare net/http upstream (the floor child) is hit directly,
through nginx (proxy_pass over kept-alive upstream connections) when nginx
is installed, and through aditus-queue proxy with each --clients upstream
client behind each --visitor-servers server (proxy-CLIENT on fasthttp's,
proxy-CLIENT-nethttp on net/http's), sending an admitted visitor's cookie
of a capacity room. Every
target runs --rounds times, the order reversed every other round; it
prints each run with the server's CPU time per request (its processes'
user and system time over the run, from /proc: the figure a busy machine
moves least), then the medians and their ratios to nginx (to the direct
upstream without nginx). Everything listens on 127.0.0.1.
`

func proxyCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	conns := fs.Int("connections", 64, "wrk's connections")
	rounds := fs.Int("rounds", 3, "runs of each target, in alternating order")
	d := fs.Duration("duration", 8*time.Second, "length of each wrk run (whole seconds)")
	clients := fs.String("clients", "fast,std", "the proxy's --upstream-client values to compare, comma-separated")
	servers := fs.String("visitor-servers", "fast,std", "the proxy's --visitor-server values to run each client behind, comma-separated")
	nginx := fs.Bool("nginx", true, "compare with nginx when it is installed")
	if code, done := parse(fs, proxySynopsis, args, stdout, stderr); done {
		return code
	}
	fail := failure(stderr, "proxy")
	if *conns < 1 || *rounds < 1 || *d < time.Second {
		return fail(ExitUsage, fmt.Errorf("--connections and --rounds must be at least 1 and --duration at least 1s"))
	}
	list, err := fastOrStd("--clients", "upstream client", *clients)
	if err != nil {
		return fail(ExitUsage, err)
	}
	vs, err := fastOrStd("--visitor-servers", "visitor server", *servers)
	if err != nil {
		return fail(ExitUsage, err)
	}
	wrk, err := floor.FindWrk()
	if err != nil {
		return fail(ExitFailed, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(ExitFailed, fmt.Errorf("find this program to start the upstream and the proxies: %w", err))
	}
	dir, err := os.MkdirTemp("", "aq-bench-proxy-")
	if err != nil {
		return fail(ExitFailed, err)
	}
	defer os.RemoveAll(dir)
	cfg := floor.ProxyConfig{Exe: exe, Clients: list, Servers: vs, Wrk: wrk, Conns: *conns, Duration: *d, Rounds: *rounds,
		Dir: dir, ChildEnv: childEnv, Stderr: stderr,
		OnRun: func(round int, name string, r floor.WrkResult, cpu time.Duration) {
			fmt.Fprintf(stdout, "round %d  %-10s %9.0f req/s  p99 %6.2f ms  CPU %5.1f µs/request  errors %d\n",
				round, name, r.Rate, ms(r.P99), us(cpu), r.Errors)
		}}
	if *nginx {
		if p, err := exec.LookPath("nginx"); err == nil {
			cfg.Nginx = p
		} else {
			fmt.Fprintln(stderr, "aditus-queue bench proxy: nginx is not installed; ratios are to the direct upstream")
		}
	}
	fmt.Fprintf(stdout, "wrk -t%d -c%d -d%v, %d rounds\n", wrk.Threads, *conns, *d, *rounds)
	targets, err := floor.CompareProxies(ctx, cfg)
	if err != nil {
		return fail(ExitFailed, err)
	}
	printProxyTargets(stdout, targets)
	return ExitOK
}

// fastOrStd reads a comma-separated list of "fast" and "std".
func fastOrStd(flagName, what, list string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v != "fast" && v != "std" {
			return nil, fmt.Errorf("%s: unknown %s %q; want fast and/or std", flagName, what, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// printProxyTargets prints each target's medians and their ratios to
// nginx's, or to the direct upstream's without nginx.
func printProxyTargets(w io.Writer, ts []floor.ProxyTarget) {
	base := ts[0]
	for _, t := range ts {
		if t.Name == "nginx" {
			base = t
		}
	}
	fmt.Fprintf(w, "medians; ratios to %s\n", base.Name)
	for _, t := range ts {
		fmt.Fprintf(w, "%-10s %9.0f req/s  p99 %6.2f ms  CPU %5.1f µs/request  ×%.2f req/s  ×%.2f p99  ×%.2f CPU\n",
			t.Name, t.MedianRate(), ms(t.MedianP99()), us(t.MedianCPU()),
			floor.Ratio(t.MedianRate(), base.MedianRate()), floor.Ratio(float64(t.MedianP99()), float64(base.MedianP99())),
			floor.Ratio(float64(t.MedianCPU()), float64(base.MedianCPU())))
	}
}

// ms and us are d in milliseconds and microseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
