// Package floor is the baseline the server is measured against: a bare
// net/http and gorilla/websocket server that does the least work an answer
// of the same size can cost, and the driver that runs the same load client
// against the floor and the real server, alternately, and reports the
// ratios.
package floor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// DefaultStatusBody has the shape and about the size of a status answer of
// the contract. Compare serves the real server's own answer instead.
var DefaultStatusBody = []byte(`{"queue":"bench-0a1b2c3d","name":"Load test","number":1234,"serving":1180,"ahead":54,"admitted":false,"estimatedWaitSeconds":54,"retryAfterSeconds":5,"active":true}` + "\n")

// writeTimeout bounds one frame's write to one socket.
const writeTimeout = 5 * time.Second

// DefaultJoinBody has the shape and about the size of a join answer of the
// contract. Compare serves the real server's own answer instead.
var DefaultJoinBody = []byte(`{"queue":"bench-0a1b2c3d","name":"Load test","number":1235,"serving":1180,"ahead":55,"admitted":false,"estimatedWaitSeconds":55,"retryAfterSeconds":5,"active":true,"ticket":"1235.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}` + "\n")

// Server is the floor. On 127.0.0.1 and a free port it answers
//
//	GET  /queue/<slug>/status  one constant JSON body with a Retry-After header
//	POST /queue/<slug>/join    one constant JSON body (the bytes of a join answer)
//	GET  /queue/<slug>/ws      a WebSocket that gets every broadcast frame
//
// and is steered through
//
//	PUT  /floor/status?retryAfter=S  replace the status body with the request body
//	PUT  /floor/join                 replace the join body with the request body
//	POST /floor/rate?rate=N          push a room frame carrying rate N to every socket
//	GET  /floor/memory[?gc=1]        this process's memory (load.Memory), after a GC with gc=1
//
// The sockets use the same buffer sizes as the real server's, so a memory
// comparison shows what the real server adds per socket.
type Server struct {
	srv      *http.Server
	url      *url.URL
	upgrader websocket.Upgrader
	status   atomic.Pointer[cannedAnswer]
	join     atomic.Pointer[cannedAnswer]
	handlers sync.WaitGroup // the per-socket read loops

	sendMu sync.Mutex // serialises writes, so a socket has one writer; guards last
	last   *websocket.PreparedMessage

	mu     sync.Mutex // guards conns and closed
	conns  map[*websocket.Conn]struct{}
	closed bool
}

// cannedAnswer is a constant answer (status or join) with its header
// values, built once so the handler only assigns slices.
type cannedAnswer struct {
	body   []byte
	header http.Header
}

func newAnswer(body []byte, header ...string) *cannedAnswer {
	a := &cannedAnswer{body: body, header: http.Header{
		"Content-Type":   {"application/json"},
		"Content-Length": {strconv.Itoa(len(body))},
	}}
	for i := 0; i+1 < len(header); i += 2 {
		a.header[header[i]] = []string{header[i+1]}
	}
	return a
}

func (a *cannedAnswer) write(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	_, _ = w.Write(a.body)
}

// NewServer starts a floor on addr, which must be a loopback host:port
// ("127.0.0.1:0" for any free port).
func NewServer(addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, errors.New("floor: listen address must be a loopback IP address")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		url: &url.URL{Scheme: "http", Host: ln.Addr().String()},
		upgrader: websocket.Upgrader{
			ReadBufferSize: 256, WriteBufferSize: 1024, WriteBufferPool: &sync.Pool{},
			CheckOrigin: func(*http.Request) bool { return true },
		},
		conns: map[*websocket.Conn]struct{}{},
	}
	s.SetStatus(nil, "")
	s.SetJoin(nil)
	first, err := json.Marshal(ws.Frame{Type: "room", Serving: 1180, Waiting: 54, ServerTime: time.Now().UnixMilli()})
	if err != nil {
		return nil, err
	}
	if s.last, err = websocket.NewPreparedMessage(websocket.TextMessage, first); err != nil {
		return nil, err
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL returns the server's base URL.
func (s *Server) URL() *url.URL { return s.url }

// ServeHTTP routes the floor's few paths with as little work as possible.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/queue/") && strings.HasSuffix(p, "/status"):
		s.status.Load().write(w)
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/queue/") && strings.HasSuffix(p, "/join"):
		s.join.Load().write(w)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/queue/") && strings.HasSuffix(p, "/ws"):
		s.handleWS(w, r)
	case r.Method == http.MethodPut && p == "/floor/status":
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.SetStatus(body, r.URL.Query().Get("retryAfter"))
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPut && p == "/floor/join":
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.SetJoin(body)
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && p == "/floor/rate":
		rate, err := strconv.Atoi(r.URL.Query().Get("rate"))
		if err != nil || rate < 1 {
			http.Error(w, "rate: want a positive integer", http.StatusBadRequest)
			return
		}
		if _, err := s.SetRate(r.Context(), rate); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && p == "/floor/memory":
		m, forced, _ := s.Memory(r.Context(), r.URL.Query().Get("gc") == "1")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(memoryAnswer{Memory: m, GC: forced, Sockets: s.Sockets()})
	default:
		http.NotFound(w, r)
	}
}

type memoryAnswer struct {
	load.Memory
	GC      bool `json:"gc"`
	Sockets int  `json:"sockets"`
}

func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<16+1))
	if err == nil && len(b) > 1<<16 {
		err = errors.New("body over 64 KiB")
	}
	return b, err
}

// SetJoin replaces the join answer with body (DefaultJoinBody when nil).
func (s *Server) SetJoin(body []byte) {
	if body == nil {
		body = DefaultJoinBody
	}
	// The real join answers no-store; the header costs the floor too.
	s.join.Store(newAnswer(body, "Cache-Control", "no-store"))
}

// SetStatus replaces the status answer: body (DefaultStatusBody when nil)
// with the Retry-After value retryAfter ("5" when empty).
func (s *Server) SetStatus(body []byte, retryAfter string) {
	if body == nil {
		body = DefaultStatusBody
	}
	if retryAfter == "" {
		retryAfter = "5"
	}
	s.status.Store(newAnswer(body, "Retry-After", retryAfter))
}

// Memory reads this process's memory, after a garbage collection when gc
// is set; it makes the floor a load.MemoryReader.
func (s *Server) Memory(_ context.Context, gc bool) (load.Memory, bool, error) {
	return ReadMemory(gc), gc, nil
}

// ReadMemory reads the Go heap and stacks in use and the resident size of
// this process, after a garbage collection when gc is set.
func ReadMemory(gc bool) load.Memory {
	if gc {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return load.Memory{HeapInuse: ms.HeapInuse, StackInuse: ms.StackInuse, RSS: rss()}
}

// rss reads the resident set size from /proc (Linux); 0 elsewhere.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.handlers.Add(1)
	s.mu.Unlock()
	// Like the real server, greet a new socket with the current frame.
	s.sendMu.Lock()
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	_ = c.WritePreparedMessage(s.last)
	s.sendMu.Unlock()
	// The read loop gets a goroutine of its own, so that the HTTP
	// server's goroutine, its grown stack and its buffers go away.
	go s.readLoop(c)
}

// readLoop reads only to notice the close; visitors send nothing.
func (s *Server) readLoop(c *websocket.Conn) {
	defer s.handlers.Done()
	c.SetReadLimit(512)
	for {
		if _, _, err := c.NextReader(); err != nil {
			break
		}
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// Sockets reports the number of open sockets.
func (s *Server) Sockets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Broadcast pushes frame, encoded once, to every open socket, one after
// another from this goroutine, and returns how many it was written to. A
// socket whose write fails is closed.
func (s *Server) Broadcast(frame []byte) (int, error) {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
	if err != nil {
		return 0, err
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.last = pm
	s.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
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

// SetRate pushes a room frame carrying ratePerMinute to every socket, as
// the real server does after a rate change; it makes the floor a
// load.RateChanger.
func (s *Server) SetRate(_ context.Context, ratePerMinute int) (time.Time, error) {
	sentAt := time.Now()
	frame, err := json.Marshal(ws.Frame{Type: "room", Queue: "bench-floor", Serving: 1180.5, Cap: 1234, Rate: float64(ratePerMinute),
		Active: true, Waiting: 54, Issued: 1234, ServerTime: sentAt.UnixMilli()})
	if err != nil {
		return time.Time{}, err
	}
	if _, err := s.Broadcast(frame); err != nil {
		return time.Time{}, err
	}
	return sentAt, nil
}

// Close stops the server, closes every socket and waits for their loops.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.handlers.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

var (
	_ load.RateChanger  = (*Server)(nil)
	_ load.MemoryReader = (*Server)(nil)
)
