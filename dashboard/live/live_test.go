package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/dashboard/live"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
	"github.com/aditus-queue/aditus-queue/transport/api"
)

const adminTok = "test-admin-token"

type env struct {
	t   testing.TB
	srv *httptest.Server
	hub *live.Hub
}

// newEnv starts a real node (one member holding every role) on the
// embedded log in a temporary directory, with the HTTP front and the live
// hub on a loopback port.
func newEnv(t testing.TB) *env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := filelog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.NewSealer(make([]byte, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	n, err := node.Start(node.Config{Member: true, Deps: node.Deps{Log: l, Sealer: sealer, Hash: seal.HashSecret,
		Logger: log, Metrics: node.NewMetrics(reg)}})
	if err != nil {
		t.Fatal(err)
	}
	hub := live.New(live.Config{Client: n.Client, AdminHash: seal.HashSecret(adminTok), Hash: seal.HashSecret, Logger: log,
		KeyRecheck: 300 * time.Millisecond})
	s := api.New(api.Config{Node: n, PublicURL: "http://queue.test", AdminTokenHash: seal.HashSecret(adminTok),
		Hash: seal.HashSecret, Logger: log, Registry: reg, Extra: []func(*echo.Echo){hub.Register}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		hub.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
		_ = l.Close()
	})
	return &env{t: t, srv: srv, hub: hub}
}

func (e *env) call(method, path, auth string, body any) map[string]any {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+auth)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode >= 300 {
		e.t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, m)
	}
	return m
}

func (e *env) createRoom(slug string, rate float64) string {
	m := e.call("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": slug, "name": "Sale " + slug,
		"targetUrl": "https://shop.example.com/", "ratePerMinute": rate, "active": true})
	return m["site"].(map[string]any)["id"].(string)
}

func (e *env) createKey(id string) string {
	return e.call("POST", "/api/admin/queue/sites/"+id+"/keys", adminTok, map[string]any{"name": "ops"})["key"].(string)
}

// dial opens the live socket of room id offering protocols; query is
// appended to the URL as is.
func (e *env) dial(id, query string, protocols ...string) *websocket.Conn {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/api/admin/queue/sites/" + id + "/live" + query
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	c, res, err := d.Dial(u, nil)
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	if got := res.Header.Get("Sec-WebSocket-Protocol"); len(protocols) > 0 && got != adminws.Subprotocol {
		e.t.Fatalf("subprotocol: got %q, want %q", got, adminws.Subprotocol)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func readFrame(t *testing.T, c *websocket.Conn) live.Frame {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read frame: %v", err)
	}
	var f live.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return f
}

// closeCode reads until the server closes the socket and returns its code.
func closeCode(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			t.Fatalf("got %v, want a close frame", err)
		}
	}
}

func TestLiveFrames(t *testing.T) {
	e := newEnv(t)
	id := e.createRoom("live", 1)
	c := e.dial(id, "", adminws.Subprotocol, "bearer."+adminTok)
	f := readFrame(t, c)
	if f.Type != "stats" || f.Room != id || f.Slug != "live" || f.Name != "Sale live" || !f.Active ||
		f.RatePerMinute != 1 || f.State != "not_queueing" || len(f.History) == 0 || f.Adjustments == nil {
		t.Fatalf("first frame: got %+v", f)
	}
	if _, err := time.Parse(time.RFC3339Nano, f.At); err != nil {
		t.Fatalf("at: %v", err)
	}
	// Joins arrive: the waiting count rises from frame to frame.
	var last live.Frame
	prevT := f.History[len(f.History)-1].T
	rises := 0
	for i := 0; i < 4; i++ {
		for range 5 {
			e.call("POST", "/queue/live/join", "", nil)
		}
		fr := readFrame(t, c)
		for _, p := range fr.History {
			if p.T <= prevT {
				t.Fatalf("frame %d repeats sample %d (last seen %d)", i, p.T, prevT)
			}
			prevT = p.T
		}
		if fr.Waiting > last.Waiting {
			rises++
		}
		last = fr
	}
	if rises < 2 || last.Waiting < 10 || last.State != "queueing" || last.Issued < 15 || last.EstimatedWaitSeconds <= 0 {
		t.Fatalf("after 20 joins at 1/min: got waiting %d (rose %d times), state %s, issued %d, wait %d",
			last.Waiting, rises, last.State, last.Issued, last.EstimatedWaitSeconds)
	}
	// A dashboard opened later gets the history in its first frame.
	late := e.dial(id, "", adminws.Subprotocol, "bearer."+adminTok)
	lf := readFrame(t, late)
	if len(lf.History) < 4 || lf.History[len(lf.History)-1].Waiting < 10 || lf.History[0].Waiting != 0 {
		t.Fatalf("late dashboard's history: got %+v, want the samples from the start", lf.History)
	}
	for i := 1; i < len(lf.History); i++ {
		if lf.History[i].T <= lf.History[i-1].T {
			t.Fatalf("history out of order: %+v", lf.History)
		}
	}
	if e.hub.Sockets() != 2 {
		t.Fatalf("sockets: got %d, want 2", e.hub.Sockets())
	}
}

// A dashboard that offers permessage-deflate gets its frames compressed:
// fewer bytes on the wire than the frame it reads.
func TestLiveFramesCompressed(t *testing.T) {
	e := newEnv(t)
	id := e.createRoom("deflate", 1)
	for range 3 {
		e.call("POST", "/queue/deflate/join", "", nil)
	}
	var wire atomic.Int64
	d := websocket.Dialer{Subprotocols: []string{adminws.Subprotocol, "bearer." + adminTok}, HandshakeTimeout: 5 * time.Second,
		EnableCompression: true,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, read: &wire}, nil
		}}
	c, res, err := d.Dial("ws"+strings.TrimPrefix(e.srv.URL, "http")+"/api/admin/queue/sites/"+id+"/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ext := res.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions: got %q, want permessage-deflate", ext)
	}
	handshake := wire.Load()
	var total int
	for range 3 {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var f live.Frame
		if err := json.Unmarshal(b, &f); err != nil || f.Type != "stats" {
			t.Fatalf("frame %s: %v", b, err)
		}
		total += len(b)
	}
	onWire := wire.Load() - handshake
	t.Logf("3 frames: %d bytes of JSON, %d bytes on the wire", total, onWire)
	if onWire >= int64(total) {
		t.Fatalf("frames not compressed: %d bytes on the wire for %d bytes of frames", onWire, total)
	}
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func TestLiveAuth(t *testing.T) {
	e := newEnv(t)
	id := e.createRoom("mine", 60)
	other := e.createRoom("theirs", 60)
	key, otherKey := e.createKey(id), e.createKey(other)
	sendAuth := func(c *websocket.Conn, tok string) {
		if err := c.WriteJSON(map[string]string{"type": "auth", "token": tok}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("admin token as subprotocol", func(t *testing.T) {
		if f := readFrame(t, e.dial(id, "", adminws.Subprotocol, "bearer."+adminTok)); f.Room != id {
			t.Fatalf("got %+v", f)
		}
	})
	t.Run("the room's own key as first message", func(t *testing.T) {
		c := e.dial(id, "", adminws.Subprotocol)
		sendAuth(c, key)
		if f := readFrame(t, c); f.Room != id || f.Slug != "mine" {
			t.Fatalf("got %+v", f)
		}
	})
	t.Run("the room's own key as subprotocol", func(t *testing.T) {
		if f := readFrame(t, e.dial(id, "", adminws.Subprotocol, "bearer."+key)); f.Room != id {
			t.Fatalf("got %+v", f)
		}
	})
	t.Run("a revoked key's socket closes", func(t *testing.T) {
		k := e.call("POST", "/api/admin/queue/sites/"+id+"/keys", adminTok, map[string]any{"name": "temp"})
		c := e.dial(id, "", adminws.Subprotocol, "bearer."+k["key"].(string))
		readFrame(t, c)
		req, _ := http.NewRequest("DELETE", e.srv.URL+"/api/admin/queue/sites/"+id+"/keys/"+k["id"].(string), nil)
		req.Header.Set("Authorization", "Bearer "+adminTok)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("revoke: %v %v", res, err)
		}
		res.Body.Close()
		if got := closeCode(t, c); got != adminws.CloseUnauthorized {
			t.Fatalf("got close code %d, want %d", got, adminws.CloseUnauthorized)
		}
	})
	for _, tc := range []struct {
		name  string
		room  string
		query string
		proto []string
		auth  string
		want  int
	}{
		{"wrong token as subprotocol", id, "", []string{adminws.Subprotocol, "bearer.wrong"}, "", adminws.CloseUnauthorized},
		{"wrong token as first message", id, "", []string{adminws.Subprotocol}, "wrong", adminws.CloseUnauthorized},
		{"revoked-looking key of the room", id, "", []string{adminws.Subprotocol, "bearer.qak_" + id + "_forged"}, "", adminws.CloseUnauthorized},
		{"another room's key", id, "", []string{adminws.Subprotocol, "bearer." + otherKey}, "", adminws.CloseForbidden},
		{"another room's key as first message", id, "", []string{adminws.Subprotocol}, otherKey, adminws.CloseForbidden},
		{"unknown room", "rnosuchroom", "", []string{adminws.Subprotocol, "bearer." + adminTok}, "", adminws.CloseNotFound},
		{"token in the query string is ignored", id, "?token=" + adminTok + "&access_token=" + adminTok, []string{adminws.Subprotocol}, "", adminws.CloseUnauthorized},
		{"not an auth message", id, "", []string{adminws.Subprotocol}, "-", adminws.CloseUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dial(tc.room, tc.query, tc.proto...)
			switch tc.auth {
			case "":
			case "-":
				_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"hello"}`))
			default:
				sendAuth(c, tc.auth)
			}
			if got := closeCode(t, c); got != tc.want {
				t.Fatalf("got close code %d, want %d", got, tc.want)
			}
		})
	}
}
