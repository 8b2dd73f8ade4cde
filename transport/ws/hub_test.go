package ws_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// sealer is the real cipher under a fixed test key.
var sealer, _ = seal.NewSealer(make([]byte, seal.KeySize))

func sha(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func call(t *testing.T, method, url string, body any) map[string]any {
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

func TestSocketsReceiveRoomFrames(t *testing.T) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err := node.Start(node.Config{Member: true, Deps: node.Deps{Log: memlog.New(), Sealer: sealer, Hash: sha, Logger: log}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Kill()
	hub := ws.NewHub(n.Views, log, time.Now)
	defer hub.Close()
	s := api.New(api.Config{Node: n, PublicURL: "http://x", AdminTokenHash: sha("admin"), Hash: sha, Logger: log,
		Registry: prometheus.NewRegistry(), Extra: []func(*echo.Echo){hub.Register}})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

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
	deadline := time.Now().Add(5 * time.Second)
	for hub.Sockets() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("closed socket not dropped: %d", hub.Sockets())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
