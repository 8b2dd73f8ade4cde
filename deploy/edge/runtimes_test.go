package edge

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/transport/gate"
)

// needRuntimes skips a runtime test unless deploy/edge/test.sh set it up.
func needRuntimes(t *testing.T) {
	t.Helper()
	if os.Getenv("AQ_EDGE_TESTS") == "" {
		t.Skip("edge runtimes not set up: run deploy/edge/test.sh (or deploy/local/test.sh), which installs nginx+njs, Caddy via xcaddy, miniflare and PyJWT and sets AQ_EDGE_TESTS=1")
	}
}

// startUpstream runs the recording shop on a loopback port.
func startUpstream(t *testing.T, r room) (*upstream, string) {
	up := &upstream{room: r}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	return up, srv.URL
}

// lockedBuffer keeps a process's output for failure reports.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProcess starts cmd, waits until base answers HTTP, and stops the
// process (SIGTERM, then SIGKILL) when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, base string) {
	t.Helper()
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(cmd.Path), out)
		}
	})
	answers := testwait.Poll(60*time.Second, 50*time.Millisecond, func() bool {
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", cmd.Path, out)
		default:
		}
		res, err := client.Get(base + "/")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	if !answers {
		t.Fatalf("%s did not answer on %s within 60 s:\n%s", cmd.Path, base, out)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func here(t *testing.T, parts ...string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{wd}, parts...)...)
}

// TestGoGate runs the table against transport/gate in front of a reverse
// proxy, as a Go shop or our own proxy uses it.
func TestGoGate(t *testing.T) {
	r := newRoom("go-gate")
	up, upURL := startUpstream(t, r)
	target, _ := url.Parse(upURL)
	g, err := gate.New(r.slug, []byte(r.secret), r.url)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Wrap(httputil.NewSingleHostReverseProxy(target)))
	t.Cleanup(srv.Close)
	runTable(t, srv.URL, r, up, ours)
}

// nginxConf is a test server around a gate: module, temp paths and logs in
// dir, one server on port whose location / runs the gate.
func nginxConf(dir string, port int, upURL, jsFile, module, serverLines string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // the worker reads files in the test's private directory
	}
	return fmt.Sprintf(`%s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log info;
load_module /usr/lib/nginx/modules/ngx_http_js_module.so;
env ADITUS_QUEUE_SECRET;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[2]s/body;
	proxy_temp_path %[2]s/proxy;
	fastcgi_temp_path %[2]s/fastcgi;
	uwsgi_temp_path %[2]s/uwsgi;
	scgi_temp_path %[2]s/scgi;
	js_import %[5]s from %[4]s;
	server {
		listen 127.0.0.1:%[3]d;
		%[6]s
		location / { js_content %[5]s.gate; }
		location @shop { proxy_pass %[7]s; }
	}
}
`, user, dir, port, jsFile, module, serverLines, upURL)
}

func startNginx(t *testing.T, r room, conf func(dir string, port int) string) string {
	if _, err := os.Stat("/usr/lib/nginx/modules/ngx_http_js_module.so"); err != nil {
		t.Fatal("nginx's njs module is missing: apt-get install nginx libnginx-mod-http-js")
	}
	dir := t.TempDir()
	port := testbin.FreePort(t)
	write(t, filepath.Join(dir, "nginx.conf"), conf(dir, port))
	cmd := exec.Command("nginx", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	cmd.Env = append(os.Environ(), "ADITUS_QUEUE_SECRET="+r.secret)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startProcess(t, cmd, base)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%s", b)
		}
	})
	return base
}

// TestNginx runs the table against deploy/edge/nginx/aditus_queue.js in
// Debian's nginx with njs.
func TestNginx(t *testing.T) {
	needRuntimes(t)
	r := newRoom("nginx-gate")
	up, upURL := startUpstream(t, r)
	base := startNginx(t, r, func(dir string, port int) string {
		return nginxConf(dir, port, upURL, here(t, "nginx", "aditus_queue.js"), "aditus_queue",
			fmt.Sprintf("set $aditus_queue_slug %s;\n\t\tset $aditus_queue_room %s;", r.slug, r.url))
	})
	runTable(t, base, r, up, ours)
}

// seedSketch reads one of the seed's sketches and replaces only its slug
// and the waiting room's host.
func seedSketch(t *testing.T, name string, r room, dir string) string {
	b, err := os.ReadFile(here(t, "seed", name))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "<slug>", r.slug)
	s = strings.ReplaceAll(s, "https://developers.aditus.com", strings.TrimSuffix(r.url, "/queue/"+r.slug))
	s = strings.ReplaceAll(s, "<ADITUS_QUEUE_SECRET>", r.secret)
	p := filepath.Join(dir, name)
	write(t, p, s)
	return p
}

// TestNginxSeedSketch runs the seed's own njs sketch against our tokens.
func TestNginxSeedSketch(t *testing.T) {
	needRuntimes(t)
	r := newRoom("nginx-seed")
	up, upURL := startUpstream(t, r)
	js := seedSketch(t, "nginx-queue.js", r, t.TempDir())
	base := startNginx(t, r, func(dir string, port int) string {
		return nginxConf(dir, port, upURL, js, "queue", "")
	})
	runTable(t, base, r, up, seedNginx)
}

// TestCaddy runs the table against Caddy built with our module
// (deploy/edge/caddy/build.sh; test.sh passes the binary in AQ_CADDY_BIN).
func TestCaddy(t *testing.T) {
	needRuntimes(t)
	bin := os.Getenv("AQ_CADDY_BIN")
	if bin == "" {
		t.Fatal("AQ_CADDY_BIN is not set: deploy/edge/test.sh builds Caddy with deploy/edge/caddy/build.sh")
	}
	r := newRoom("caddy-gate")
	up, upURL := startUpstream(t, r)
	dir := t.TempDir()
	port := testbin.FreePort(t)
	write(t, filepath.Join(dir, "Caddyfile"), fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
	storage file_system %s
}
http://127.0.0.1:%d {
	bind 127.0.0.1
	aditus_queue {
		slug %s
		secret {env.ADITUS_QUEUE_SECRET}
		room %s
	}
	reverse_proxy %s
}
`, dir, port, r.slug, r.url, strings.TrimPrefix(upURL, "http://")))
	cmd := exec.Command(bin, "run", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "ADITUS_QUEUE_SECRET="+r.secret, "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startProcess(t, cmd, base)
	runTable(t, base, r, up, ours)
}

// startNode runs one of the Node servers under deploy/edge (the Worker
// under miniflare, the CloudFront handler behind its event adapter).
func startNode(t *testing.T, r room, script string, env ...string) string {
	if _, err := os.Stat(here(t, "node_modules")); err != nil {
		t.Fatal("deploy/edge/node_modules is missing: deploy/edge/test.sh runs npm ci")
	}
	port := testbin.FreePort(t)
	cmd := exec.Command("node", here(t, script))
	cmd.Env = append(os.Environ(), append(env,
		fmt.Sprintf("PORT=%d", port),
		"ADITUS_QUEUE_SLUG="+r.slug,
		"ADITUS_QUEUE_SECRET="+r.secret,
		"ADITUS_QUEUE_ROOM="+r.url,
	)...)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startProcess(t, cmd, base)
	return base
}

// TestCloudflareWorker runs the table against deploy/edge/cloudflare's
// Worker in workerd (miniflare 4).
func TestCloudflareWorker(t *testing.T) {
	needRuntimes(t)
	r := newRoom("worker-gate")
	up, upURL := startUpstream(t, r)
	base := startNode(t, r, "cloudflare/serve.mjs", "WORKER="+here(t, "cloudflare", "worker.js"), "ORIGIN="+upURL)
	runTable(t, base, r, up, ours)
}

// TestCloudflareWorkerSeedSketch runs the seed's own Worker against our
// tokens; miniflare's upstream stands for the shop's origin.
func TestCloudflareWorkerSeedSketch(t *testing.T) {
	needRuntimes(t)
	r := newRoom("worker-seed")
	up, upURL := startUpstream(t, r)
	js := seedSketch(t, "worker.js", r, t.TempDir())
	base := startNode(t, r, "cloudflare/serve.mjs", "WORKER="+js, "UPSTREAM="+upURL)
	runTable(t, base, r, up, seedWorker)
}

// TestCloudFront runs the table against deploy/edge/cloudfront's
// viewer-request handler, called by a Node server that turns each request
// into a CloudFront event and the handler's answer into a response or a
// request to the origin, as CloudFront does.
func TestCloudFront(t *testing.T) {
	needRuntimes(t)
	r := newRoom("cloudfront-gate")
	up, upURL := startUpstream(t, r)
	base := startNode(t, r, "cloudfront/serve.mjs", "ORIGIN="+upURL)
	runTable(t, base, r, up, ours)
}

// TestCloudFrontSeedSketch runs the seed's own Lambda@Edge sketch against
// our tokens (its secret is written into the file, as the sketch says).
func TestCloudFrontSeedSketch(t *testing.T) {
	needRuntimes(t)
	r := newRoom("cloudfront-seed")
	up, upURL := startUpstream(t, r)
	js := seedSketch(t, "cloudfront.js", r, t.TempDir())
	base := startNode(t, r, "cloudfront/serve.mjs", "ORIGIN="+upURL, "HANDLER="+js)
	runTable(t, base, r, up, seedWorker)
}

var _ http.Handler = (*upstream)(nil)
