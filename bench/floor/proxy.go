package floor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/median"
)

// ProxyConfig is a comparison of `aditus-queue proxy` with nginx under
// wrk: the same upstream (a floor child, the bare net/http handler), hit
// directly, through nginx when it is installed, and through the capacity
// proxy on each of its upstream clients with an admitted visitor's cookie.
type ProxyConfig struct {
	// Exe is the aditus-queue program (it serves the floor child and the
	// proxies).
	Exe string
	// Clients are the proxy's --upstream-client values to run (fast, std).
	Clients []string
	// Servers are the proxy's --visitor-server values to run each client
	// behind (fast, std; none: the default alone).
	Servers []string
	// Nginx is the nginx program; empty leaves nginx out.
	Nginx string
	Wrk   Wrk
	// Conns, Duration and Rounds are wrk's connections, the length of a
	// run and the rounds of runs on every target, in an order reversed
	// every other round.
	Conns    int
	Duration time.Duration
	Rounds   int
	// Dir holds the configuration files and the proxies' logs.
	Dir string
	// ChildEnv is added to the floor child's environment.
	ChildEnv []string
	// Stderr receives the children's diagnostics.
	Stderr io.Writer
	// OnRun, when set, is told of each wrk run and the server's CPU time
	// per request in it.
	OnRun func(round int, target string, r WrkResult, cpu time.Duration)
}

// ProxyTarget is one target's runs.
type ProxyTarget struct {
	Name string
	Runs []WrkResult
	// CPU is the server's CPU time per request in each run (user and
	// system time of its processes over the run, from /proc; zero where
	// there is no /proc).
	CPU []time.Duration
}

// MedianCPU is the median of CPU.
func (t ProxyTarget) MedianCPU() time.Duration {
	v := slices.Clone(t.CPU)
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

// MedianRate and MedianP99 are over the target's runs.
func (t ProxyTarget) MedianRate() float64 {
	return median.Lower(t.Runs, func(r WrkResult) float64 { return r.Rate })
}

func (t ProxyTarget) MedianP99() time.Duration {
	return time.Duration(median.Lower(t.Runs, func(r WrkResult) float64 { return float64(r.P99) }))
}

// proxyHost is the host block the compared proxies serve.
const proxyHost = "shop.test"

// proxyPath is the upstream path every target is asked for.
const proxyPath = "/queue/bench/status"

type proxyRun struct {
	name    string
	url     string
	headers []string
	// pids are the server's processes, for its CPU time.
	pids func() []int
}

// CompareProxies runs the comparison; the targets come back in the order
// direct, nginx, then the proxy's clients.
func CompareProxies(ctx context.Context, cfg ProxyConfig) ([]ProxyTarget, error) {
	up, err := StartProcess(ctx, cfg.Exe, []string{"bench", "floor-server"}, cfg.ChildEnv, cfg.Stderr)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	runs := []proxyRun{{name: "direct", url: up.URL().String() + proxyPath, headers: []string{"Host: " + proxyHost},
		pids: func() []int { return []int{up.cmd.Process.Pid} }}}
	if cfg.Nginx != "" {
		addr, pid, stop, err := startNginx(ctx, cfg.Nginx, cfg.Dir, up.URL().Host)
		if err != nil {
			return nil, err
		}
		defer stop()
		runs = append(runs, proxyRun{name: "nginx", url: "http://" + addr + proxyPath, headers: []string{"Host: " + proxyHost},
			pids: func() []int { return append(childrenOf(pid), pid) }})
	}
	servers := cfg.Servers
	if len(servers) == 0 {
		servers = []string{"fast"}
	}
	for _, s := range servers {
		for _, c := range cfg.Clients {
			name := proxyTargetName(s, c)
			addr, pid, stop, err := startCapacityProxy(ctx, cfg, name, []string{"--upstream-client", c, "--visitor-server", s}, up.URL().Host)
			if err != nil {
				return nil, err
			}
			defer stop()
			cookie, err := admitted(ctx, addr)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			runs = append(runs, proxyRun{name: name, url: "http://" + addr + proxyPath,
				headers: []string{"Host: " + proxyHost, "Cookie: " + cookie}, pids: func() []int { return []int{pid} }})
		}
	}
	return measureProxies(ctx, cfg, runs)
}

// measureProxies runs each target cfg.Rounds times, the order reversed
// every other round, with the server's CPU time per request.
func measureProxies(ctx context.Context, cfg ProxyConfig, runs []proxyRun) ([]ProxyTarget, error) {
	out := make([]ProxyTarget, len(runs))
	for i, r := range runs {
		out[i].Name = r.name
	}
	for round := 1; round <= cfg.Rounds; round++ {
		for k := range runs {
			i := k
			if round%2 == 0 {
				i = len(runs) - 1 - k
			}
			pids := runs[i].pids()
			before := cpuTime(pids)
			res, err := cfg.Wrk.runHeaders(ctx, runs[i].url, cfg.Conns, cfg.Duration, runs[i].headers)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", runs[i].name, err)
			}
			var perRequest time.Duration
			if res.Requests > 0 {
				perRequest = (cpuTime(pids) - before) / time.Duration(res.Requests)
			}
			out[i].Runs = append(out[i].Runs, res)
			out[i].CPU = append(out[i].CPU, perRequest)
			if cfg.OnRun != nil {
				cfg.OnRun(round, runs[i].name, res, perRequest)
			}
		}
	}
	return out, nil
}

// runHeaders runs wrk's GET against url with extra request headers.
func (w Wrk) runHeaders(ctx context.Context, url string, conns int, d time.Duration, headers []string) (WrkResult, error) {
	args := w.args(conns, d)
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	return w.run(ctx, append(args, url), d)
}

// stopProcess interrupts cmd and kills it if it has not ended after
// grace.
func stopProcess(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// freeLoopbackAddr is a 127.0.0.1 port the kernel chose, closed again for
// a program that takes a fixed port.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// nginxConf proxies everything to the upstream over kept-alive
// connections, as a shop's nginx in front of its application would.
const nginxConf = `daemon off;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	upstream shop { server %[2]s; keepalive 64; }
	server {
		listen %[3]s;
		location / {
			proxy_pass http://shop;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $host;
			proxy_set_header X-Forwarded-For $remote_addr;
		}
	}
}
`

// startNginx runs nginx unprivileged in dir/nginx in front of upstream
// and waits until it answers.
func startNginx(ctx context.Context, nginx, dir, upstream string) (string, int, func(), error) {
	d := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", 0, nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return "", 0, nil, err
	}
	conf := filepath.Join(d, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, d, upstream, addr), 0o600); err != nil {
		return "", 0, nil, err
	}
	cmd := exec.Command(nginx, "-p", d, "-e", filepath.Join(d, "error.log"), "-c", conf)
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start nginx: %w", err)
	}
	stop := func() { stopProcess(cmd, 5*time.Second) }
	if err := waitAnswer(ctx, "http://"+addr+proxyPath); err != nil {
		stop()
		log, _ := os.ReadFile(filepath.Join(d, "error.log"))
		return "", 0, nil, fmt.Errorf("nginx: %w: %.300s", err, log)
	}
	return addr, cmd.Process.Pid, stop, nil
}

// capacityConf is one capacity room in front of the upstream, with room
// for every connection wrk opens.
const capacityConf = `host "%s" {
  location "/" {
    upstream "%s" {}
    waiting_room {
      active         = 1000
      on_store_error = "wait"
      session        = "1h"
    }
  }
}
`

var proxyServing = regexp.MustCompile(`msg="aditus-queue proxy serving" addr=(\S+)`)

// proxyTargetName names the proxy on visitor server s and upstream client
// c: proxy-<c> on fasthttp's server (the default), proxy-<c>-nethttp on
// net/http's.
func proxyTargetName(s, c string) string {
	if s == "std" {
		return "proxy-" + c + "-nethttp"
	}
	return "proxy-" + c
}

// startCapacityProxy runs `aditus-queue proxy` alone on its embedded log
// with the given flags and returns the address it serves.
func startCapacityProxy(ctx context.Context, cfg ProxyConfig, client string, flags []string, upstream string) (string, int, func(), error) {
	conf := filepath.Join(cfg.Dir, "shop-"+client+".hcl")
	if err := os.WriteFile(conf, fmt.Appendf(nil, capacityConf, proxyHost, upstream), 0o600); err != nil {
		return "", 0, nil, err
	}
	cmd := exec.Command(cfg.Exe, append([]string{"proxy", "--config", conf, "--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0",
		"--data-dir", filepath.Join(cfg.Dir, "data-"+client)}, flags...)...)
	out, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start the proxy: %w", err)
	}
	var stopping atomic.Bool
	stop := func() {
		stopping.Store(true)
		stopProcess(cmd, 10*time.Second)
	}
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := proxyServing.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
			// Errors while it runs are worth seeing; those of its
			// shutdown are not.
			if cfg.Stderr != nil && !stopping.Load() && strings.Contains(sc.Text(), "level=ERROR") {
				fmt.Fprintln(cfg.Stderr, "proxy "+client+": "+sc.Text())
			}
		}
		close(addrs)
	}()
	t := time.NewTimer(60 * time.Second)
	defer t.Stop()
	select {
	case a, ok := <-addrs:
		if ok {
			return a, cmd.Process.Pid, stop, nil
		}
		stop()
		return "", 0, nil, fmt.Errorf("proxy %s ended before it served", client)
	case <-t.C:
	case <-ctx.Done():
	}
	stop()
	return "", 0, nil, fmt.Errorf("proxy %s did not serve within 60s", client)
}

// waitAnswer asks url until it answers 200.
func waitAnswer(ctx context.Context, url string) error {
	_, err := ask(ctx, url, "")
	return err
}

// admitted returns an admitted visitor's cookie of the proxy at addr.
// A first request's cookie is provisional: sent back, it is a
// confirmation call to the room's grain, and so is every request bearing
// it until it is renewed. The cookie the second request sets is the
// admitted visitor's, which passes the gate without asking the room: a
// request bearing it is answered with no new cookie, which admitted checks
// before the benchmark measures it.
func admitted(ctx context.Context, addr string) (string, error) {
	url := "http://" + addr + proxyPath
	first, err := ask(ctx, url, "")
	if err != nil {
		return "", err
	}
	cookie, err := ask(ctx, url, first)
	if err != nil {
		return "", err
	}
	if cookie == "" {
		return "", errors.New("a first request's cookie brought no admitted visitor's cookie")
	}
	if again, err := ask(ctx, url, cookie); err != nil || again != "" {
		return "", fmt.Errorf("the admitted visitor's cookie is not let through as it is (new cookie %q, %v)", again, err)
	}
	return cookie, nil
}

// ask asks url as a visitor of proxyHost, bearing cookie when it is not
// empty, until it answers 200, for up to 30 s, and returns the aq_ cookie
// the answer sets ("" for none).
func ask(ctx context.Context, url, cookie string) (string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	last := errors.New("no answer")
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return "", err
		}
		req.Host = proxyHost
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return setCookie(res), nil
			}
			last = fmt.Errorf("HTTP %d", res.StatusCode)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return "", last
}

// setCookie is the aq_ cookie res sets, as name=value, or "".
func setCookie(res *http.Response) string {
	for _, c := range res.Cookies() {
		if strings.HasPrefix(c.Name, "aq_") {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTime is the user and system time the processes pids have used, from
// /proc (zero without it).
func cpuTime(pids []int) time.Duration {
	var t time.Duration
	for _, pid := range pids {
		if f := procStat(pid); len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			t += time.Duration(u+s) * clockTick
		}
	}
	return t
}

// procStat is /proc/PID/stat's fields after the command name, from the
// state on (field 3 of proc(5) is element 0).
func procStat(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// childrenOf lists the processes whose parent is pid (nginx's workers).
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(p); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}
