package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
)

// TestMain runs the tests from the repository's root (README.md and the
// test data are named from there) and removes the binary the tests built.
func TestMain(m *testing.M) {
	root, err := testbin.Root()
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testbin.Main(m)
}

// server is a running `aditus-queue serve`.
type server struct {
	*testbin.Proc
	t    *testing.T
	base string
}

// startServer runs `aditus-queue serve` and waits for healthz.
func startServer(t *testing.T, dataDir, addr string, extra ...string) *server {
	t.Helper()
	p, base := testbin.Serve(t, dataDir, addr, extra...)
	return &server{Proc: p, t: t, base: base}
}

// answers says whether a GET of url is answered 200.
func answers(url string) bool {
	res, err := http.Get(url)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// createOnSale creates the room "onsale" (600 a minute) with an address
// budget no load from loopback exhausts, and returns the created answer.
func (s *server) createOnSale(admin string) map[string]any {
	s.t.Helper()
	st, created := s.call("POST", "/api/admin/queue/sites", admin, map[string]any{
		"slug": "onsale", "name": "On-sale", "targetUrl": "https://shop.example.com/", "ratePerMinute": 600, "active": true,
		// Every join of the load comes from loopback.
		"addressBudget": map[string]any{"perMinute": 6000000, "burst": 10000000}})
	if st != 201 {
		s.t.Fatalf("create: %d %v", st, created)
	}
	return created
}

// joinAbove joins "onsale" after what (a restart, a restore) and wants a
// number above max: numbers go on above every number handed out before.
func (s *server) joinAbove(what string, max float64) {
	s.t.Helper()
	st, j := s.call("POST", "/queue/onsale/join", "", nil)
	if n, _ := j["number"].(float64); st != 200 || n <= max {
		s.t.Fatalf("join after %s: %d %v, but %v was handed out before", what, st, j, max)
	}
}

func (s *server) call(method, path, auth string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}
