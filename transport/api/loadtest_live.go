package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// livePoll is how often a live socket asks the load-test grain for new
// seconds; each asks for the seconds after the last it sent.
const livePoll = 500 * time.Millisecond

var liveUpgrader = websocket.Upgrader{
	ReadBufferSize: 1024, WriteBufferSize: 4096, HandshakeTimeout: 10 * time.Second,
	Subprotocols: []string{adminws.Subprotocol},
	// The token travels in the protocol header or the first message, never
	// in a cookie, so a page of another origin gains nothing by opening it.
	CheckOrigin: func(*http.Request) bool { return true },
}

// secondFrame is one second of a run on the live socket.
type secondFrame struct {
	Type  string `json:"type"`
	RunID string `json:"run"`
	loadtest.Second
}

// handleLoadTestLive pushes a run's per-second figures: first
// {"type":"run","run":{…}} with the run and its seconds so far, then
// {"type":"second","run":id,…} for each new second, and at the end
// {"type":"end","run":{…}} with the totals, after which it closes (1000).
// Authentication is the admin sockets' handshake (adminws.Token): the admin
// token in Sec-WebSocket-Protocol as "bearer.<token>" beside
// "aditus-queue.v1", or a first message {"type":"auth","token":…} within
// 5 s; never the query string. An address that failed too often gets 429
// before the upgrade, or closes with 4429. A bad token closes with 4401, a
// qak_ key with 4403 (load tests are the operator's), an unknown run 4404.
func (s *Server) handleLoadTestLive(c echo.Context) error {
	conn := s.operatorSocket(c)
	if conn == nil {
		return nil
	}
	defer conn.Close()
	// The reader notices the client going away.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			if _, _, err := conn.NextReader(); err != nil {
				return
			}
		}
	}()
	s.streamRun(c.Request().Context(), conn, c.Param("id"), gone)
	return nil
}

// operatorSocket upgrades an admin socket and signs it in as the operator;
// it answers or closes a refused one itself and returns nil.
func (s *Server) operatorSocket(c echo.Context) *websocket.Conn {
	if s.auth.RefuseLimited(c.Response(), c.Request()) {
		return nil
	}
	signedIn, ok := s.auth.PendingSocket(c.Response())
	if !ok {
		return nil
	}
	defer signedIn()
	conn, err := liveUpgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil // the upgrader has answered
	}
	tok, err := adminws.Token(c.Request(), conn)
	if err != nil {
		adminws.WriteClose(conn, adminws.CloseUnauthorized, "authentication expected")
		conn.Close()
		return nil
	}
	actx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	p, err := s.auth.Authenticate(actx, c.Request(), tok)
	cancel()
	switch {
	case err != nil:
		r := adminauth.SocketRefusal(err)
		adminws.WriteClose(conn, r.Code, r.Reason)
	case !p.Operator:
		adminws.WriteClose(conn, adminws.CloseForbidden, "API keys may not watch load tests")
	default:
		return conn
	}
	conn.Close()
	return nil
}

// streamRun writes run id's frames to conn every livePoll until the run
// ends, is not found or the client is gone.
func (s *Server) streamRun(ctx context.Context, conn *websocket.Conn, id string, gone <-chan struct{}) {
	since, first := 0, true
	t := time.NewTicker(livePoll)
	defer t.Stop()
	for {
		run, err := s.liveRun(ctx, id, since)
		if protocol.IsCode(err, protocol.CodeNotFound) {
			adminws.WriteClose(conn, adminws.CloseNotFound, "no such load test")
			return
		}
		if err == nil {
			if !writeRun(conn, run, first) {
				return
			}
			first = false
			if n := len(run.Series); n > 0 {
				since = run.Series[n-1].Index
			}
			if run.Ended() {
				write(conn, map[string]any{"type": "end", "run": run.Summary()})
				adminws.WriteClose(conn, websocket.CloseNormalClosure, "the load test ended")
				return
			}
		}
		select {
		case <-gone:
			return
		case <-t.C:
		}
	}
}

// writeRun writes the whole run as the first frame, and its new seconds
// after; it reports whether the socket took them.
func writeRun(conn *websocket.Conn, run *loadtest.Run, first bool) bool {
	if first {
		return write(conn, map[string]any{"type": "run", "run": runAnswer{run, orEmpty(run.Series)}})
	}
	for _, sec := range run.Series {
		if !write(conn, secondFrame{Type: "second", RunID: run.ID, Second: sec}) {
			return false
		}
	}
	return true
}

func (s *Server) liveRun(ctx context.Context, id string, since int) (*loadtest.Run, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.client.LoadTest(ctx, id, since)
}

func orEmpty(s []loadtest.Second) []loadtest.Second {
	if s == nil {
		return []loadtest.Second{}
	}
	return s
}

func write(conn *websocket.Conn, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return conn.WriteMessage(websocket.TextMessage, b) == nil
}
