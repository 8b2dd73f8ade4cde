package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// The visitor listener shows no metrics; the operations listener serves
// them, the probe and (on loopback) the profiles. When a listener fails,
// serve shuts the node down in order and says which listener: the other
// listeners stop, the grains write their final checkpoints, the log is
// closed.
func TestOpsListenerAndShutdownOnListenerFailure(t *testing.T) {
	dir := t.TempDir()
	addr := testbin.FreeAddr(t)
	cfg, err := parseServeFlags([]string{"--addr", addr, "--data-dir", dir, "--admin-token", docAdminToken,
		"--log-level", "warn", "--public-url", "http://" + addr, "--ops-addr", "127.0.0.1:0"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	up := make(chan *listeners, 1)
	listening = func(ls *listeners) { up <- ls }
	serving = func(*echo.Echo, string) {}
	t.Cleanup(func() { listening, serving = nil, nil })
	done := make(chan error, 1)
	go func() { done <- serve(context.Background(), cfg) }()
	var ls *listeners
	select {
	case ls = <-up:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start within 60 s")
	}
	base := "http://" + addr
	ops := "http://" + ls.get("ops").ln.Addr().String()

	req, _ := http.NewRequest("POST", base+"/api/admin/queue/sites", strings.NewReader(
		`{"slug":"ops-sale","name":"Ops","targetUrl":"https://shop.example.com/","domains":["shop.example.com"],"ratePerMinute":1,"active":true}`))
	req.Header.Set("Authorization", "Bearer "+docAdminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create room: %v %v", res, err)
	}
	var created struct {
		Site struct{ ID string } `json:"site"`
	}
	_ = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if res, err := http.Post(base+"/queue/ops-sale/join", "application/json", nil); err != nil || res.StatusCode != 200 {
		t.Fatalf("join: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	if st, body := testbin.Get(t, base+"/metrics"); st != http.StatusNotFound || strings.Contains(body, "ops-sale") {
		t.Errorf("visitor /metrics: %d %q, want 404 without the room", st, body)
	}
	if st, body := testbin.Get(t, ops+"/metrics"); st != http.StatusOK || !strings.Contains(body, "\naditus_queue_joins_total 1\n") ||
		!strings.Contains(body, "\naditus_queue_rooms_unavailable 0\n") {
		t.Errorf("ops /metrics: %d, want 200 with the join and the unavailable rooms' gauge", st)
	}
	if st, body := testbin.Get(t, ops+"/queue/healthz"); st != http.StatusOK || !strings.Contains(body, `"status":"ok"`) ||
		!strings.Contains(body, `"build":{"version":"`+release.Version+`"`) || !strings.Contains(body, `"features":["events","modes","restore"]`) {
		t.Errorf("ops /queue/healthz: %d %q, want ok with the build and its features", st, body)
	}
	if st, body := testbin.Get(t, base+"/queue/healthz"); st != http.StatusOK || strings.Contains(body, "build") {
		t.Errorf("visitor /queue/healthz: %d %q, want ok without the build", st, body)
	}
	if st, _ := testbin.Get(t, ops+"/debug/pprof/"); st != http.StatusOK {
		t.Errorf("ops /debug/pprof/ on loopback: %d, want 200", st)
	}
	if st, _ := testbin.Get(t, base+"/debug/pprof/"); st == http.StatusOK {
		t.Errorf("visitor /debug/pprof/: %d, want no profiles", st)
	}

	// The operations listener breaks.
	_ = ls.get("ops").ln.Close()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return within 30 s of its ops listener failing")
	}
	if err == nil || !strings.Contains(err.Error(), "ops listener on 127.0.0.1:") {
		t.Fatalf("serve returned %v, want an error naming the ops listener", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the visitor listener still accepts after serve returned")
	}
	// The log was closed (its lock is free) after the room's grain wrote
	// its final checkpoint with the number it issued.
	l, err := filelog.Open(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatalf("the log is still held: %v", err)
	}
	defer l.Close()
	var last room.Event
	if _, err := l.Replay(context.Background(), created.Site.ID, 0, func(r persistence.Record) error {
		last, err = room.DecodeEvent(r.Data)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if last.Checkpoint == nil || !last.Checkpoint.Final || last.Checkpoint.Issued != 1 {
		t.Fatalf("the room's last event is %+v, want the final checkpoint with the number issued", last)
	}
}

// addrListener is a loopback listener that reports another address, to
// see what serveOps does when bound beyond loopback.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

// Bound beyond loopback (for a scraper on the cluster network), the
// operations listener serves metrics and the probe but no profiles.
func TestOpsListenerServesNoProfilesBeyondLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	real := ln.Addr().String()
	ls := newListeners()
	l := &listener{name: "ops", ln: addrListener{ln, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 9090}}}
	ls.all = append(ls.all, l)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "m 1\n") })
	serveOps(ls, l, mux)
	defer ls.shutdown(context.Background())
	if st, _ := testbin.Get(t, "http://"+real+"/metrics"); st != http.StatusOK {
		t.Fatalf("/metrics: %d", st)
	}
	if st, _ := testbin.Get(t, "http://"+real+"/debug/pprof/"); st != http.StatusNotFound {
		t.Fatalf("/debug/pprof/ beyond loopback: %d, want 404", st)
	}
	if srv := l.srv.(*http.Server); srv.WriteTimeout == 0 || srv.ReadTimeout == 0 || srv.IdleTimeout == 0 || srv.ReadHeaderTimeout == 0 {
		t.Fatalf("timeouts of the ops server beyond loopback: %+v", srv)
	}
}

// Every public server has read, write and idle timeouts.
func TestPublicServerTimeouts(t *testing.T) {
	s := publicServer(http.NotFoundHandler())
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Fatalf("timeouts %v %v %v %v, want all set", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
}
