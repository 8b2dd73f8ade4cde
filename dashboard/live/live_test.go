package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/dashboard/live"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
	"github.com/aditus-queue/aditus-queue/transport/api"
	"github.com/aditus-queue/aditus-queue/transport/api/apitest"
)

const adminTok = apitest.AdminToken

type env struct {
	*apitest.Server
	t   testing.TB
	hub *live.Hub
}

// newEnv starts a real node (apitest.Start) with the live hub on its
// front.
func newEnv(t testing.TB) *env {
	t.Helper()
	var hub *live.Hub
	s := apitest.Start(t, apitest.Options{Front: func(n *front.Front, c *api.Config) {
		hub = live.New(live.Config{Client: n.Client, AdminHash: seal.HashSecret(adminTok), Hash: seal.HashSecret, Logger: c.Logger,
			KeyRecheck: 300 * time.Millisecond})
		t.Cleanup(hub.Close)
		c.Extra = append(c.Extra, hub.Register)
	}})
	return &env{Server: s, t: t, hub: hub}
}

// call is Server.Call for requests that must succeed.
func (e *env) call(method, path, auth string, body any) map[string]any {
	e.t.Helper()
	st, m := e.Call(method, path, auth, body)
	if st >= 300 {
		e.t.Fatalf("%s %s: %d %v", method, path, st, m)
	}
	return m
}

// dial opens the live socket of room id offering protocols; query is
// appended to the URL as is.
func (e *env) dial(id, query string, protocols ...string) *websocket.Conn {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.URL, "http") + "/api/admin/queue/sites/" + id + "/live" + query
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

// readJSON reads c's next frame, within ten seconds, as an F.
func readJSON[F any](t *testing.T, c *websocket.Conn) F {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read frame: %v", err)
	}
	var f F
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return f
}

// readFrame reads a rate room's next frame.
func readFrame(t *testing.T, c *websocket.Conn) live.Frame {
	t.Helper()
	return readJSON[live.Frame](t, c)
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
	id := e.CreateRoom("live", 1)
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
	id := e.CreateRoom("deflate", 1)
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
	c, res, err := d.Dial("ws"+strings.TrimPrefix(e.URL, "http")+"/api/admin/queue/sites/"+id+"/live", nil)
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
	id := e.CreateRoom("mine", 60)
	other := e.CreateRoom("theirs", 60)
	key, otherKey := e.CreateKey(id), e.CreateKey(other)
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
		req, _ := http.NewRequest("DELETE", e.URL+"/api/admin/queue/sites/"+id+"/keys/"+k["id"].(string), nil)
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
