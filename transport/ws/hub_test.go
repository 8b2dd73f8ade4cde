package ws_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// sealer is the real cipher under a fixed test key.
var sealer, _ = seal.NewSealer(make([]byte, seal.KeySize))

func sha(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func call(t testing.TB, method, url string, body any) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %v", method, url, res.StatusCode, m)
	}
	return m
}

// startHub starts a node with the socket hub under limits, its API on a
// test server, logging to log, and stops them when the test ends.
func startHub(t testing.TB, limits ws.Limits, log *slog.Logger) (*httptest.Server, *ws.Hub) {
	t.Helper()
	n := nodetest.Start(t, node.Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Sealer: sealer, Hash: sha, Logger: log}})
	hub, err := ws.NewHub(n.Views, log, time.Now, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	s := api.New(api.Config{Node: n.Front, PublicURL: "http://x", AdminTokenHash: sha("admin"), Hash: sha, Logger: log,
		Registry: prometheus.NewRegistry(), Extra: []func(*echo.Echo){hub.Register}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, hub
}

func TestSocketsReceiveRoomFrames(t *testing.T) {
	srv, hub := startHub(t, ws.Limits{PerTicket: ws.DefaultPerTicket, PerNode: ws.DefaultPerNode}, nodetest.Logger())

	created := call(t, "POST", srv.URL+"/api/admin/queue/sites", map[string]any{"slug": "live", "name": "Live", "ratePerMinute": 1, "active": true})
	site := created["site"].(map[string]any)
	var tickets []string
	for i := 0; i < 3; i++ {
		tickets = append(tickets, call(t, "POST", srv.URL+"/queue/live/join", nil)["ticket"].(string))
	}
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/queue/live/ws?ticket="
	if _, res, err := websocket.DefaultDialer.Dial(wsURL+"forged", nil); err == nil || res.StatusCode != 401 {
		t.Fatalf("forged ticket: %v %v", res, err)
	}
	var conns []*websocket.Conn
	for _, tk := range tickets {
		c, _, err := websocket.DefaultDialer.Dial(wsURL+tk, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	read := func(c *websocket.Conn) ws.Frame {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var f ws.Frame
		if err := c.ReadJSON(&f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range conns {
		if f := read(c); f.Type != "room" || f.Queue != "live" || f.Rate != 1 || f.Issued != 3 {
			t.Fatalf("first frame: %+v", f)
		}
	}
	// A rate change reaches every socket.
	site["ratePerMinute"] = 600
	call(t, "PATCH", srv.URL+"/api/admin/queue/sites/"+site["id"].(string), site)
	for _, c := range conns {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if f := read(c); f.Rate == 600 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("rate change never pushed")
			}
		}
	}
	if got := hub.Sockets(); got != 3 {
		t.Fatalf("sockets %d, want 3", got)
	}
	conns[0].Close()
	waitSockets(t, hub, 2)
}

// Sockets beyond a ticket's or the node's limit are refused before the
// upgrade with the contract's JSON error and a Retry-After, and counted.
func TestSocketLimits(t *testing.T) {
	srv, hub := startHub(t, ws.Limits{PerTicket: 2, PerNode: 3}, nodetest.Logger())
	reg := prometheus.NewRegistry()
	reg.MustRegister(hub.Collectors()...)
	call(t, "POST", srv.URL+"/api/admin/queue/sites", map[string]any{"slug": "live", "name": "Live", "ratePerMinute": 1, "active": true})
	var tickets []string
	for i := 0; i < 3; i++ {
		tickets = append(tickets, call(t, "POST", srv.URL+"/queue/live/join", nil)["ticket"].(string))
	}
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/queue/live/ws?ticket="
	open := func(tk string) *websocket.Conn {
		t.Helper()
		c, _, err := websocket.DefaultDialer.Dial(wsURL+tk, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	refused := func(tk string, status int, code string) {
		t.Helper()
		_, res, err := websocket.DefaultDialer.Dial(wsURL+tk, nil)
		if err == nil || res == nil {
			t.Fatalf("socket opened, want %d %s", status, code)
		}
		defer res.Body.Close()
		var e struct{ Error, Message string }
		_ = json.NewDecoder(res.Body).Decode(&e)
		if res.StatusCode != status || e.Error != code || e.Message == "" || res.Header.Get("Retry-After") == "" {
			t.Fatalf("got %d %+v Retry-After %q, want %d %s with Retry-After", res.StatusCode, e, res.Header.Get("Retry-After"), status, code)
		}
	}
	first := open(tickets[0])
	open(tickets[0])
	refused(tickets[0], http.StatusTooManyRequests, "too_many_sockets")
	open(tickets[1])
	refused(tickets[2], http.StatusServiceUnavailable, "busy")

	want := map[string]float64{"aditus_queue_page_sockets": 3,
		`aditus_queue_page_sockets_refused_total{reason="ticket"}`: 1, `aditus_queue_page_sockets_refused_total{reason="node"}`: 1}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += `{` + l.GetName() + `="` + l.GetValue() + `"}`
			}
			got[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	// A socket that leaves gives its place back.
	first.Close()
	waitSockets(t, hub, 2)
	open(tickets[2])
}

// waitSockets waits up to 5 s for the hub to count n sockets, as it does
// once a closed one is dropped.
func waitSockets(t *testing.T, hub *ws.Hub, n int) {
	t.Helper()
	testwait.Until(t, 5*time.Second, fmt.Sprintf("the hub counting %d sockets once the closed one is dropped", n), func() bool { return hub.Sockets() == n })
}
