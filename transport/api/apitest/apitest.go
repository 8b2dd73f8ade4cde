// Package apitest starts a real node behind the real HTTP front for the
// tests of the parts mounted on it (the live dashboard, the instance
// reports, the Grafana dashboard's metrics): one member holding every
// role, on the embedded log in a temporary directory, with the front on a
// loopback port and its metrics in a registry of its own.
package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/api"
)

// AdminToken is the operator's bearer token of every Server.
const AdminToken = "test-admin-token"

// PublicURL is every Server's public URL; nothing answers there.
const PublicURL = "http://queue.test"

// Options change a Server before it starts.
type Options struct {
	// Logger replaces nodetest.Logger for the node and the front.
	Logger *slog.Logger
	// Front changes the front's configuration once the node runs: routes
	// of other parts (Extra, AdminRoutes) that need the node's client.
	Front func(n *front.Front, c *api.Config)
	// Log replaces the node's log (a file log in a temporary directory).
	Log persistence.Log
}

// Server is a running node with its front.
type Server struct {
	URL      string // the front's base URL, http://127.0.0.1:<port>
	OpsURL   string // the operations listener's base URL (/metrics, /queue/healthz)
	Node     *node.Node
	Registry *prometheus.Registry
	Logger   *slog.Logger
	t        testing.TB
}

// Start starts a Server that stops when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	log := o.Logger
	if log == nil {
		log = nodetest.Logger()
	}
	reg := prometheus.NewRegistry()
	n := nodetest.Start(t, node.Config{Member: true, Deps: grain.Deps{Logger: log, Metrics: grain.NewMetrics(reg), Log: o.Log}})
	cfg := api.Config{Node: n.Front, PublicURL: PublicURL, AdminTokenHash: seal.HashSecret(AdminToken), Hash: seal.HashSecret,
		Logger: log, Registry: reg}
	if o.Front != nil {
		o.Front(n.Front, &cfg)
	}
	front := api.New(cfg)
	srv := httptest.NewServer(front.Handler())
	t.Cleanup(srv.Close)
	ops := httptest.NewServer(front.Ops())
	t.Cleanup(ops.Close)
	return &Server{URL: srv.URL, OpsURL: ops.URL, Node: n, Registry: reg, Logger: log, t: t}
}

// Call sends a JSON request with auth as the bearer token ("" for none)
// and answers the status and the decoded JSON body (nil when there is
// none).
func (s *Server) Call(method, path, auth string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// CreateRoom creates an active room of the given rate through the admin
// API and answers its id.
func (s *Server) CreateRoom(slug string, ratePerMinute float64) string {
	s.t.Helper()
	st, m := s.Call("POST", "/api/admin/queue/sites", AdminToken, map[string]any{"slug": slug, "name": "Sale " + slug,
		"targetUrl": "https://shop.example.com/", "ratePerMinute": ratePerMinute, "active": true})
	if st != http.StatusCreated {
		s.t.Fatalf("create room %s: %d %v", slug, st, m)
	}
	return m["site"].(map[string]any)["id"].(string)
}

// CreateKey adds an API key to room id and answers it.
func (s *Server) CreateKey(id string) string {
	s.t.Helper()
	st, m := s.Call("POST", "/api/admin/queue/sites/"+id+"/keys", AdminToken, map[string]any{"name": "ops"})
	if st != http.StatusCreated {
		s.t.Fatalf("create key: %d %v", st, m)
	}
	return m["key"].(string)
}
