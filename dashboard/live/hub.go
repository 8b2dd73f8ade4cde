// Package live serves the operator's live dashboard socket,
// GET /api/admin/queue/sites/<id>/live. Each front node keeps one feed per
// room while at least one dashboard of that room is open: the feed reads
// the room grain's figures once a second (the grain computes them once a
// second into its stats ring), encodes one frame and writes it to every
// socket of the room. The first frame of a socket carries the last 30
// minutes; later frames only the samples that are new since the previous
// one.
package live

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// Config wires a Hub.
type Config struct {
	Client *front.Client
	// AdminHash is the hash (Hash) of the operator's token.
	AdminHash []byte
	// Hash hashes tokens and keys the way they are stored.
	Hash   func(string) []byte
	Logger *slog.Logger
	Now    func() time.Time
	// KeyRecheck overrides how often a socket opened with a key checks
	// that the key still stands (default 30 s).
	KeyRecheck time.Duration
	// Auth checks credentials; nil builds one from Client, AdminHash and
	// Hash. Give the admin API's, so that both share its cache and
	// failure budget.
	Auth *adminauth.Authenticator
}

const (
	// Interval is the time between two frames of a room.
	Interval     = time.Second
	pullTimeout  = 2 * time.Second
	writeTimeout = 5 * time.Second
	// sendBuffer frames may wait for a slow socket; one more drops it.
	sendBuffer = 4
)

// Hub holds this node's dashboard sockets and their rooms' feeds.
type Hub struct {
	client   *front.Client
	auth     *adminauth.Authenticator
	log      *slog.Logger
	now      func() time.Time
	upgrader websocket.Upgrader
	sockets  atomic.Int64
	// keyRecheck is how often key sockets check their key again.
	keyRecheck time.Duration

	mu sync.Mutex
	// mu guards feeds and closed.
	feeds  map[string]*feed
	closed bool
	wg     sync.WaitGroup
}

// New returns a hub; Register adds its route. It panics when cfg has no
// authenticator and none can be built (no Client or Hash): a wiring
// mistake.
func New(cfg Config) *Hub {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.KeyRecheck == 0 {
		cfg.KeyRecheck = keyRecheck
	}
	if cfg.Auth == nil {
		var err error
		if cfg.Auth, err = adminauth.New(adminauth.Config{Directory: cfg.Client, AdminHash: cfg.AdminHash, Hash: cfg.Hash}); err != nil {
			panic("live.New: " + err.Error())
		}
	}
	return &Hub{client: cfg.Client, auth: cfg.Auth, log: cfg.Logger, now: cfg.Now, keyRecheck: cfg.KeyRecheck,
		// Frames are JSON numbers in long runs; a dashboard's first frame
		// carries half an hour of samples. Compression (when the browser
		// offers it, as every current one does) shrinks them several
		// times; a prepared frame is compressed once for all sockets.
		upgrader: websocket.Upgrader{Subprotocols: []string{adminws.Subprotocol}, ReadBufferSize: 1024, WriteBufferSize: 4096,
			EnableCompression: true},
		feeds: map[string]*feed{}}
}

// Register adds GET /api/admin/queue/sites/:id/live to e.
func (h *Hub) Register(e *echo.Echo) { e.GET("/api/admin/queue/sites/:id/live", h.handleLive) }

// Sockets is how many dashboard sockets are open on this node.
func (h *Hub) Sockets() int { return int(h.sockets.Load()) }

// Close says goodbye to every socket and stops the feeds.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	feeds := h.feeds
	h.feeds = map[string]*feed{}
	h.mu.Unlock()
	for _, f := range feeds {
		close(f.stop)
		f.closeAll(websocket.CloseGoingAway, "server shutting down")
	}
	h.wg.Wait()
}

func (h *Hub) handleLive(c echo.Context) error {
	id := c.Param("id")
	if h.auth.RefuseLimited(c.Response(), c.Request()) {
		return nil
	}
	signedIn, ok := h.auth.PendingSocket(c.Response())
	if !ok {
		return nil
	}
	defer signedIn()
	conn, err := h.upgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil // the upgrader has answered
	}
	h.sockets.Add(1)
	defer h.sockets.Add(-1)
	tok, err := adminws.Token(c.Request(), conn)
	if err != nil {
		refuse(conn, err)
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	p, err := h.auth.Authenticate(ctx, c.Request(), tok)
	if err == nil {
		err = h.authorize(ctx, p, id)
	} else {
		err = adminauth.SocketRefusal(err)
	}
	cancel()
	signedIn()
	if err != nil {
		refuse(conn, err)
		return nil
	}
	s := &socket{conn: conn, send: make(chan *websocket.PreparedMessage, sendBuffer), gone: make(chan struct{})}
	f := h.join(id, s)
	if f == nil {
		refuse(conn, &adminws.Refusal{Code: websocket.CloseGoingAway, Reason: "server shutting down"})
		return nil
	}
	go s.writer()
	if isKey(tok) {
		h.spawn(func() { h.recheck(s, tok, id) })
	}
	// The reader only notices the client leaving; dashboards send nothing
	// after the auth message.
	conn.SetReadLimit(adminws.ReadLimit)
	for {
		if _, _, err := conn.NextReader(); err != nil {
			break
		}
	}
	h.leave(f, s)
	s.close(websocket.CloseNormalClosure, "")
	return nil
}

// recheck closes s with 4401 once its key no longer stands (revoked,
// room deleted); it ends with the socket.
func (h *Hub) recheck(s *socket, tok, id string) {
	t := time.NewTicker(h.keyRecheck)
	defer t.Stop()
	for {
		select {
		case <-s.gone:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p, err := h.auth.Principal(ctx, tok)
		if err == nil {
			err = h.authorize(ctx, p, id)
		} else {
			err = adminauth.SocketRefusal(err)
		}
		cancel()
		if r, ok := err.(*adminws.Refusal); ok && r.Code != websocket.CloseTryAgainLater {
			s.close(r.Code, r.Reason)
			return
		}
	}
}

// refuse closes conn with the refusal's code and reason.
func refuse(conn *websocket.Conn, err error) {
	r, ok := err.(*adminws.Refusal)
	if !ok {
		r = &adminws.Refusal{Code: websocket.CloseInternalServerErr, Reason: "internal error"}
	}
	adminws.WriteClose(conn, r.Code, r.Reason)
	_ = conn.Close()
}

// spawn runs fn on a goroutine that Close waits for; not after Close.
func (h *Hub) spawn(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn()
	}()
}

// join adds s to room id's feed, starting the feed for the room's first
// socket. nil after Close.
func (h *Hub) join(id string, s *socket) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	f := h.feeds[id]
	if f == nil {
		f = &feed{h: h, id: id, conns: map[*socket]bool{}, stop: make(chan struct{})}
		h.feeds[id] = f
		h.wg.Add(1)
		go f.run()
	}
	f.mu.Lock()
	f.conns[s] = false
	f.mu.Unlock()
	return f
}

// leave removes s; the room's last socket stops its feed.
func (h *Hub) leave(f *feed, s *socket) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.mu.Lock()
	delete(f.conns, s)
	empty := len(f.conns) == 0
	f.mu.Unlock()
	if empty && h.feeds[f.id] == f {
		delete(h.feeds, f.id)
		close(f.stop)
	}
}

// feed reads one room's figures once a second and writes them to the
// room's sockets on this node.
type feed struct {
	h    *Hub
	id   string
	stop chan struct{}

	mu sync.Mutex
	// mu guards conns (value: the socket has had its first frame),
	// history and since.
	conns   map[*socket]bool
	history []Point
	since   int64
}

func (f *feed) run() {
	defer f.h.wg.Done()
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		f.pull()
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
	}
}

// pull reads the samples new since the last pull and sends one frame: the
// new samples to sockets that have the history, the whole history to
// those that joined since. Both are encoded once for all sockets.
func (f *feed) pull() {
	if protocol.IsCapacityID(f.id) {
		f.pullCapacity()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	f.mu.Lock()
	since := f.since
	f.mu.Unlock()
	r, err := f.h.client.Stats(ctx, f.id, since)
	cancel()
	if protocol.IsCode(err, protocol.CodeNotFound) {
		f.closeAll(errNoRoom.Code, errNoRoom.Reason)
		return
	}
	if err != nil {
		// Try again on the next tick: a member fail-over takes a second
		// or two, and the new activation starts a new ring.
		f.h.log.Debug("dashboard stats read failed", "room", f.id, "error", err)
		return
	}
	now := f.h.now()
	fresh := make([]Point, 0, len(r.History))
	for _, s := range r.History {
		fresh = append(fresh, pointOf(s))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(r.History); n > 0 {
		last := r.History[n-1].T
		if last < f.since {
			// A new activation's ring: its samples restart the history.
			f.history = f.history[:0]
		}
		f.since = last
	}
	f.history = append(f.history, fresh...)
	if over := len(f.history) - room.StatsDepth; over > 0 {
		f.history = append(f.history[:0], f.history[over:]...)
	}
	var delta, full *websocket.PreparedMessage
	for s, primed := range f.conns {
		var pm *websocket.PreparedMessage
		if primed {
			if delta == nil {
				delta = ws.Prepare(frameOf(r, fresh, now))
			}
			pm = delta
		} else {
			if full == nil {
				full = ws.Prepare(frameOf(r, f.history, now))
			}
			pm = full
			f.conns[s] = true
		}
		if pm != nil && !s.offer(pm) {
			go s.close(websocket.CloseTryAgainLater, "too slow")
		}
	}
}

// closeAll closes every socket of the feed with code and reason.
func (f *feed) closeAll(code int, reason string) {
	f.mu.Lock()
	conns := make([]*socket, 0, len(f.conns))
	for s := range f.conns {
		conns = append(conns, s)
	}
	f.mu.Unlock()
	for _, s := range conns {
		s.close(code, reason)
	}
}
