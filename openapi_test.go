package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/transport/api"
)

// notDocumented are the routes the API document leaves out on purpose, by
// "METHOD path" ("*" for every method), with the reason the document's
// description gives too.
var notDocumented = map[string]string{
	"GET /queue/assets/*":    "static files of the hosted page",
	"OPTIONS /queue/:slug/*": "CORS preflight of the visitor endpoints",
	"* /api/admin/queue/*":   "fallback of the admin group: 403 for a key, 404 for the admin token",
	"* /admin":               "the operator console (redirect to /admin/), GET and HEAD",
	"* /admin/":              "the operator console, GET and HEAD",
	"* /admin/*":             "the operator console's files, GET and HEAD",
}

const docAdminToken = "openapi-test-admin-token"

// TestOpenAPI holds the API document at /api/openapi.json true to the server
// that serve builds: the routes of the router and the operations of the
// document are the same set (both ways), and recorded answers of every
// documented operation are valid against the document's schemas.
func TestOpenAPI(t *testing.T) {
	base, e := startInProcess(t)
	c := &docClient{t: t, base: base}
	st, h, body := c.raw("GET", "/api/openapi.json", "", nil)
	if st != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !bytes.Equal(body, api.OpenAPI) {
		t.Fatalf("GET /api/openapi.json: %d %s, want 200 application/json with the embedded document", st, h.Get("Content-Type"))
	}
	doc := loadAPIDoc(t, body)
	c.doc = doc
	c.call(200, "GET", "/api/openapi.json", "", nil)

	t.Run("valid OpenAPI 3.1", func(t *testing.T) {
		if err := validOpenAPI(body); err != nil {
			t.Error(err)
		}
	})
	t.Run("schemas compile", func(t *testing.T) {
		for _, err := range doc.compileAll() {
			t.Error(err)
		}
	})
	t.Run("routes both ways", func(t *testing.T) {
		undocumented, missing := compareRoutes(e.Routes(), doc.routes())
		if len(undocumented) > 0 {
			t.Errorf("routes of the router missing from transport/api/openapi.json (document them, or list them in notDocumented with a reason):\n\t%s",
				strings.Join(undocumented, "\n\t"))
		}
		if len(missing) > 0 {
			t.Errorf("operations of transport/api/openapi.json that the router does not have (remove them, or register the route):\n\t%s",
				strings.Join(missing, "\n\t"))
		}
	})
	t.Run("answers match the schemas", func(t *testing.T) {
		c.t = t
		driveAnswers(c)
		checkSecurity(c)
		if un := doc.unanswered(); len(un) > 0 {
			t.Errorf("documented operations without a validated answer (drive them in driveAnswers):\n\t%s", strings.Join(un, "\n\t"))
		}
	})
}

// compareRoutes returns the routes of the router the document lacks and
// the document's operations the router lacks, each sorted.
func compareRoutes(routes []*echo.Route, documented []string) (undocumented, missing []string) {
	inRouter := map[string]bool{}
	for _, r := range routes {
		if r.Method == echo.RouteNotFound {
			continue // Echo's own not-found handlers of groups
		}
		k := r.Method + " " + r.Path
		if _, ok := notDocumented[k]; ok {
			continue
		}
		if _, ok := notDocumented["* "+r.Path]; ok {
			continue
		}
		inRouter[k] = true
	}
	inDoc := map[string]bool{}
	for _, k := range documented {
		inDoc[k] = true
		if !inRouter[k] {
			missing = append(missing, k)
		}
	}
	for k := range inRouter {
		if !inDoc[k] {
			undocumented = append(undocumented, k)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(missing)
	return undocumented, missing
}

// startInProcess runs serve in this process, as the binary does, on a free
// loopback port with the embedded log in t.TempDir, with the extra flags
// given, and returns its base URL and router.
func startInProcess(t *testing.T, extra ...string) (string, *echo.Echo) {
	t.Helper()
	env := map[string]string{
		// The health-check test calls a server of this test on loopback.
		envName("allow-private-health-urls"): "true",
	}
	// A port the kernel picks, given as the public URL too: load tests send
	// their requests to the public URL.
	addr := freeAddr(t)
	args := append([]string{"--addr", addr, "--data-dir", t.TempDir(), "--admin-token", docAdminToken,
		"--log-level", "warn", "--public-url", "http://" + addr, "--ops-addr", "127.0.0.1:0"}, extra...)
	cfg, err := parseServeFlags(args, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	type started struct {
		e    *echo.Echo
		addr string
	}
	up := make(chan started, 1)
	serving = func(e *echo.Echo, addr string) { up <- started{e, addr} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop within 30 s")
		}
		serving = nil
	})
	select {
	case s := <-up:
		return "http://" + s.addr, s.e
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start within 60 s")
	}
	return "", nil
}

// docClient sends requests and checks every answer against the document.
type docClient struct {
	t    *testing.T
	base string
	doc  *apiDoc
}

// raw sends a request without checking it against the document.
func (c *docClient) raw(method, path, auth string, body any, hdr ...string) (int, http.Header, []byte) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// call sends a request, requires status want, validates the answer (and a
// JSON request body of a successful call) against the document, and
// decodes a JSON answer.
func (c *docClient) call(want int, method, path, auth string, body any, hdr ...string) map[string]any {
	c.t.Helper()
	st, h, b := c.raw(method, path, auth, body, hdr...)
	if st != want {
		c.t.Errorf("%s %s: status %d, want %d (%.300s)", method, path, st, want, b)
		return nil
	}
	p, _, _ := strings.Cut(path, "?")
	if err := c.doc.checkAnswer(method, p, st, h, b); err != nil {
		c.t.Error(err)
	}
	if st < 300 && body != nil {
		if j, ok := body.(map[string]any); ok {
			raw, _ := json.Marshal(j)
			if err := c.doc.checkRequest(method, p, raw); err != nil {
				c.t.Errorf("request body: %v", err)
			}
		}
	}
	var m map[string]any
	if strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// freeAddr returns a loopback address on a port the kernel had free.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
