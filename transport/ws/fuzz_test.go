package ws_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// socketServer starts one node with the socket hub (per fuzzing process)
// and a room "live" whose domain is shop.example.com, and returns the
// socket URL without its ticket and a valid ticket.
func socketServer(f *testing.F) (wsURL, ticket string) {
	f.Helper()
	// Limits well above what one fuzzing process holds at once: a closed
	// socket leaves the hub a moment after the client sees it closed.
	srv, _ := startHub(f, ws.Limits{PerTicket: 64, PerNode: 1024},
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	call(f, "POST", srv.URL+"/api/admin/queue/sites", map[string]any{"slug": "live", "name": "Live", "ratePerMinute": 1, "active": true,
		"domains": []string{"shop.example.com"}})
	ticket = call(f, "POST", srv.URL+"/queue/live/join", nil)["ticket"].(string)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/queue/live/ws?ticket=", ticket
}

// FuzzSocketHandshake opens sockets with fuzzed tickets and Origin
// headers. Invariants: a socket opens only for this room's ticket and
// from no origin, the page's own or the room's domains; every refusal is
// the contract's JSON error.
func FuzzSocketHandshake(f *testing.F) {
	wsURL, ticket := socketServer(f)
	for _, o := range []string{"", "https://shop.example.com", "https://evil.example", "null", "http://127.0.0.1",
		"https://shop.example.com.evil.example", "https://shop.example.com@evil.example", "https://[::1]", "http://a:b:c"} {
		f.Add(ticket, o)
		f.Add(ticket[:len(ticket)-1]+"A", o)
	}
	f.Add("", "")
	f.Fuzz(func(t *testing.T, tk, origin string) {
		hdr := http.Header{}
		if origin != "" {
			if strings.IndexFunc(origin, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
				return // not a header value: net/http refuses it before any handler
			}
			hdr.Set("Origin", origin)
		}
		c, res, err := websocket.DefaultDialer.Dial(wsURL+url.QueryEscape(tk), hdr)
		if err == nil {
			c.Close()
			if tk != ticket {
				t.Fatalf("socket opened with ticket %q", tk)
			}
			if origin != "" {
				u, err := url.Parse(origin)
				if err != nil || (u.Hostname() != "shop.example.com" && u.Hostname() != "127.0.0.1") {
					t.Fatalf("socket opened from origin %q", origin)
				}
			}
			return
		}
		if res == nil {
			return // the header itself was refused on the way (e.g. invalid bytes)
		}
		defer res.Body.Close()
		var e struct{ Error, Message string }
		if res.StatusCode < 400 || res.StatusCode >= 500 || json.NewDecoder(res.Body).Decode(&e) != nil || e.Error == "" || e.Message == "" {
			t.Fatalf("ticket %q origin %q: %d %+v", tk, origin, res.StatusCode, e)
		}
	})
}

// FuzzSocketMessages writes fuzzed messages into an open socket (the
// server reads and drops what visitors send). Invariants: a message within
// the read limit leaves the socket working (a ping is still answered);
// anything larger closes it; the server never stops serving new sockets.
func FuzzSocketMessages(f *testing.F) {
	wsURL, ticket := socketServer(f)
	f.Add(true, []byte(`{"type":"hello"}`))
	f.Add(false, []byte{0, 1, 2, 0xff})
	f.Add(true, []byte(""))
	f.Add(true, []byte(strings.Repeat("x", 512)))
	f.Add(false, []byte(strings.Repeat("x", 513)))
	var c *websocket.Conn
	pong := make(chan struct{}, 16)
	var closed chan error
	f.Cleanup(func() {
		if c != nil {
			c.Close()
		}
	})
	f.Fuzz(func(t *testing.T, text bool, msg []byte) {
		if c == nil {
			var err error
			if c, _, err = websocket.DefaultDialer.Dial(wsURL+ticket, nil); err != nil {
				t.Fatalf("the server no longer opens sockets: %v", err)
			}
			c.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
			closed = make(chan error, 1)
			go func(c *websocket.Conn, closed chan error) {
				for {
					if _, _, err := c.ReadMessage(); err != nil {
						closed <- err
						return
					}
				}
			}(c, closed)
		}
		drop := func() {
			c.Close()
			<-closed
			c = nil
			for len(pong) > 0 {
				<-pong
			}
		}
		typ := websocket.BinaryMessage
		if text {
			typ = websocket.TextMessage
		}
		if err := c.WriteMessage(typ, msg); err != nil {
			if len(msg) <= 512 {
				t.Fatalf("writing a %d-byte message: %v", len(msg), err)
			}
			drop()
			return
		}
		_ = c.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(5*time.Second))
		select {
		case <-pong:
			if len(msg) > 512 {
				t.Fatalf("a %d-byte message left the socket open", len(msg))
			}
		case err := <-closed:
			closed <- err
			drop()
			if len(msg) <= 512 {
				t.Fatalf("a %d-byte message closed the socket: %v", len(msg), err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to a ping after a %d-byte message", len(msg))
		}
	})
}
