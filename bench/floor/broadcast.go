package floor

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/bench/load"
)

// writeTimeout bounds one frame's write to one socket.
const writeTimeout = 5 * time.Second

// BroadcastServer accepts WebSockets on /queue/<slug>/ws and, on demand,
// pushes one pre-encoded frame to every socket, on 127.0.0.1 and a free
// port.
type BroadcastServer struct {
	srv      *http.Server
	url      *url.URL
	upgrader websocket.Upgrader
	handlers sync.WaitGroup // the per-socket read loops

	sendMu sync.Mutex // serialises writes, so a socket has one writer; guards last
	last   *websocket.PreparedMessage

	mu     sync.Mutex // guards conns and closed
	conns  map[*websocket.Conn]struct{}
	closed bool
}

// NewBroadcastServer starts a broadcast floor.
func NewBroadcastServer() (*BroadcastServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &BroadcastServer{
		url:      &url.URL{Scheme: "http", Host: ln.Addr().String()},
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		conns:    map[*websocket.Conn]struct{}{},
	}
	first, err := json.Marshal(Frame{Type: "room", Serving: 1180, Waiting: 54, ServerTime: time.Now().UTC()})
	if err != nil {
		return nil, err
	}
	if b.last, err = websocket.NewPreparedMessage(websocket.TextMessage, first); err != nil {
		return nil, err
	}
	b.srv = &http.Server{Handler: http.HandlerFunc(b.handleWS), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

// URL returns the server's base URL.
func (b *BroadcastServer) URL() *url.URL { return b.url }

func (b *BroadcastServer) handleWS(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/queue/") || !strings.HasSuffix(r.URL.Path, "/ws") {
		http.NotFound(w, r)
		return
	}
	c, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		_ = c.Close()
		return
	}
	b.conns[c] = struct{}{}
	b.handlers.Add(1)
	b.mu.Unlock()
	defer b.handlers.Done()
	// Like the real server, greet a new socket with the current frame.
	b.sendMu.Lock()
	if b.last != nil {
		_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
		_ = c.WritePreparedMessage(b.last)
	}
	b.sendMu.Unlock()
	// Read only to notice the close; visitors send nothing.
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			break
		}
	}
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
	_ = c.Close()
}

// Sockets reports the number of open sockets.
func (b *BroadcastServer) Sockets() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}

// Broadcast pushes frame, encoded once, to every open socket, and returns
// how many it was written to. A socket whose write fails is closed.
func (b *BroadcastServer) Broadcast(frame []byte) (int, error) {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
	if err != nil {
		return 0, err
	}
	b.sendMu.Lock()
	defer b.sendMu.Unlock()
	b.last = pm
	b.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(b.conns))
	for c := range b.conns {
		conns = append(conns, c)
	}
	b.mu.Unlock()
	sent := 0
	for _, c := range conns {
		_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := c.WritePreparedMessage(pm); err != nil {
			_ = c.Close()
			continue
		}
		sent++
	}
	return sent, nil
}

// Frame is a room frame of the shape the real server pushes.
type Frame struct {
	Type       string    `json:"type"`
	Serving    int64     `json:"serving"`
	Rate       int       `json:"rate"`
	Waiting    int64     `json:"waiting"`
	Paused     bool      `json:"paused"`
	OpensAt    *string   `json:"opensAt"`
	ServerTime time.Time `json:"serverTime"`
}

// SetRate pushes a room frame carrying ratePerMinute to every socket, as
// the real server does after a rate change; it makes the floor a
// load.RateChanger.
func (b *BroadcastServer) SetRate(_ context.Context, ratePerMinute int) (time.Time, error) {
	sentAt := time.Now()
	frame, err := json.Marshal(Frame{Type: "room", Serving: 1180, Rate: ratePerMinute, Waiting: 54, ServerTime: sentAt.UTC()})
	if err != nil {
		return time.Time{}, err
	}
	if _, err := b.Broadcast(frame); err != nil {
		return time.Time{}, err
	}
	return sentAt, nil
}

// Close stops the server, closes every socket and waits for their loops.
func (b *BroadcastServer) Close() error {
	err := b.srv.Close()
	b.mu.Lock()
	b.closed = true
	for c := range b.conns {
		_ = c.Close()
	}
	b.mu.Unlock()
	b.handlers.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

var _ load.RateChanger = (*BroadcastServer)(nil)
