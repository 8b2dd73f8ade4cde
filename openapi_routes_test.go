package main

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/api/apidoc"
	"github.com/labstack/echo/v4"
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

// TestOpenAPIRoutes holds the API document true to the router that serve
// builds: the routes of the router and the operations of the document are
// the same set, both ways. (The answers are checked against the document
// by TestOpenAPI in deploy/local/e2e, over the binary.)
func TestOpenAPIRoutes(t *testing.T) {
	_, e := startInProcess(t)
	undocumented, missing := compareRoutes(e.Routes(), apidoc.Load(t, api.OpenAPI).Routes())
	if len(undocumented) > 0 {
		t.Errorf("routes of the router missing from transport/api/openapi.json (document them, or list them in notDocumented with a reason):\n\t%s",
			strings.Join(undocumented, "\n\t"))
	}
	if len(missing) > 0 {
		t.Errorf("operations of transport/api/openapi.json that the router does not have (remove them, or register the route):\n\t%s",
			strings.Join(missing, "\n\t"))
	}
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
	addr := testbin.FreeAddr(t)
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
