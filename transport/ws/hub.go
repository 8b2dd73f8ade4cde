// Package ws pushes room frames to waiting pages over WebSocket. One frame
// per room and tick is encoded once (a prepared message) and written to
// every socket of the room; the page derives its own position and wait.
// Slow or dead sockets are dropped without slowing the others.
package ws

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/returnurl"
)

// Frame is what every socket of a room receives.
type Frame struct {
	Type  string `json:"type"`
	Queue string `json:"queue"`
	// Serving is the admitted position at ServerTime (fractional, so the
	// page can extrapolate smoothly); Cap bounds the extrapolation.
	Serving    float64    `json:"serving"`
	Cap        float64    `json:"cap"`
	Rate       float64    `json:"rate"`
	Paused     bool       `json:"paused"`
	Active     bool       `json:"active"`
	Waiting    uint64     `json:"waiting"`
	Issued     uint64     `json:"issued"`
	OpensAt    *time.Time `json:"opensAt"`
	Drawn      bool       `json:"drawn"`
	ServerTime int64      `json:"serverTime"`
	// Stale is set when no grain has confirmed the room's view for a few
	// seconds (no member reachable, or the room moving): the page says it
	// is reconnecting and keeps extrapolating.
	Stale bool `json:"stale,omitempty"`
	// Mode is the room's mode; ModeMessage is the operator's message of
	// a sold-out or maintenance room, pushed so that waiting pages show it
	// at once.
	Mode        string            `json:"mode"`
	ModeMessage *room.ModeMessage `json:"modeMessage,omitempty"`
}

// FrameOf builds the frame of view v at now.
func FrameOf(v *room.View, now time.Time) Frame {
	t := now.UnixNano()
	f := Frame{Type: "room", Queue: v.Config.Slug, Serving: v.ServingAt(t), Cap: v.Cap(), Rate: v.Line.Rate,
		Paused: v.Paused(), Active: v.Config.Active, Waiting: v.Waiting(t), Issued: v.Issued,
		Drawn: len(v.Draws) > 0 && !v.PreQueue(), ServerTime: now.UnixMilli(), Mode: v.EffectiveMode()}
	switch f.Mode {
	case room.ModeSoldOut:
		m := v.Config.SoldOutMessage
		f.ModeMessage = &m
	case room.ModeMaintenance:
		m := v.Config.MaintenanceMessage
		f.ModeMessage = &m
	}
	if v.Config.OpensAt != nil {
		o := v.Config.OpensAt.UTC()
		f.OpensAt = &o
	}
	return f
}

const (
	// Tick is how often changed rooms are pushed. A change to a room that
	// had no frame for a Tick goes out at once; changes that follow within
	// the Tick are gathered into the frame of the next one.
	Tick = 100 * time.Millisecond
	// Keepalive is the longest time between two frames of a room.
	Keepalive    = 3 * time.Second
	writeTimeout = 5 * time.Second
	sendBuffer   = 4
	// presenceEvery is how often open sockets count as presence for
	// abandon detection.
	presenceEvery = 20 * time.Second
	// closeWait bounds how long Close waits for the sockets' goroutines.
	closeWait = 5 * time.Second
)

// Hub holds every socket of this node.
type Hub struct {
	// AllowLookup, when set before the hub serves, charges a request's
	// client one lookup of a room name this node does not know and says
	// the seconds to wait when it is over its budget (api.Server's
	// AllowLookup, so the page's API and its socket share one budget);
	// nil: no budget.
	AllowLookup func(r *http.Request) (ok bool, retryAfter int)

	views    *front.Views
	log      *slog.Logger
	now      func() time.Time
	upgrader websocket.Upgrader
	limits   Limits

	refused                    *prometheus.CounterVec
	refusedNode, refusedTicket prometheus.Counter

	mu sync.Mutex
	// mu guards rooms, changedRooms, sockets, upgrading, tickets and
	// closed. A socket joins its room under mu, so no broadcast can remove
	// the room in between.
	rooms map[string]*roomHub
	// changedRooms are the rooms changed since the loop last looked;
	// kick (one slot) wakes the loop for them.
	changedRooms map[string]*roomHub
	kick         chan struct{}
	// sockets are the joined sockets; upgrading counts upgrades under way;
	// tickets counts both by ticket.
	sockets   map[*client]struct{}
	upgrading int
	tickets   map[ticketKey]int
	closed    bool

	// beforeJoin, when set (tests), runs as a socket starts to join,
	// before the hub lock is taken.
	beforeJoin func()
	closeWait  time.Duration

	done chan struct{}
	wg   sync.WaitGroup
}

type roomHub struct {
	mu sync.Mutex
	// mu guards everything below.
	conns    map[*client]struct{}
	latest   *front.Room
	dirty    bool
	sentAt   time.Time
	presence time.Time
}

// client is one socket. Its writer goroutine runs only while frames are
// queued: an idle socket costs its reader goroutine alone, which about
// halves the memory of a room's sockets between frames.
type client struct {
	hub    *Hub
	rh     *roomHub
	conn   *websocket.Conn
	number uint64
	ticket ticketKey

	mu sync.Mutex
	// mu guards closed, writing and queue: frames are queued, and a writer
	// started, only while the socket is open, and exactly one of close and
	// the writer says goodbye on the socket.
	closed  bool
	writing bool
	queue   []*websocket.PreparedMessage // at most sendBuffer
}

// offer queues pm without blocking and starts the writer unless it runs;
// false means the socket is closed or too slow.
func (c *client) offer(pm *websocket.PreparedMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.queue) >= sendBuffer {
		return false
	}
	c.queue = append(c.queue, pm)
	if !c.writing {
		c.writing = true
		c.hub.wg.Add(1)
		go c.hub.writer(c)
	}
	return true
}

// close marks the socket closed and, unless the writer is running (it
// will), says goodbye and closes the connection.
func (c *client) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.queue = true, nil
	idle := !c.writing
	c.mu.Unlock()
	if idle {
		c.goAway()
	}
}

func (c *client) goAway() {
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	_ = c.conn.Close()
}

// NewHub starts the broadcaster; Close stops it. It refuses limits that
// are not set.
func NewHub(views *front.Views, log *slog.Logger, now func() time.Time, limits Limits) (*Hub, error) {
	if err := limits.check(); err != nil {
		return nil, err
	}
	h := newHub(log, now, limits)
	h.views = views
	h.upgrader = websocket.Upgrader{
		ReadBufferSize: 256, WriteBufferSize: 1024, WriteBufferPool: &sync.Pool{},
		HandshakeTimeout: 10 * time.Second,
		// Origins are checked in the handler, against the room's domains.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	views.OnChange(h.changed)
	h.wg.Add(1)
	go h.loop()
	return h, nil
}

// newHub is a hub's state, without its views or broadcaster.
func newHub(log *slog.Logger, now func() time.Time, limits Limits) *Hub {
	h := &Hub{log: log, now: now, limits: limits, rooms: map[string]*roomHub{}, changedRooms: map[string]*roomHub{},
		sockets: map[*client]struct{}{}, tickets: map[ticketKey]int{}, closeWait: closeWait,
		kick: make(chan struct{}, 1), done: make(chan struct{}), refused: newRefused()}
	h.refusedNode, h.refusedTicket = h.refused.WithLabelValues("node"), h.refused.WithLabelValues("ticket")
	return h
}

// Register mounts GET /queue/:slug/ws.
func (h *Hub) Register(e *echo.Echo) { e.GET("/queue/:slug/ws", h.handleSocket) }

func (h *Hub) changed(id string, r *front.Room) {
	h.mu.Lock()
	rh := h.rooms[id]
	if rh != nil {
		h.changedRooms[id] = rh
	}
	h.mu.Unlock()
	if rh == nil {
		return
	}
	rh.mu.Lock()
	rh.latest, rh.dirty = r, true
	rh.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default: // the loop is already due to look
	}
}

func jsonError(c echo.Context, status int, code, msg string) error {
	return c.JSON(status, map[string]string{"error": code, "message": msg})
}

func (h *Hub) handleSocket(c echo.Context) error {
	var allow func() bool
	retry := 0
	if h.AllowLookup != nil {
		allow = func() bool {
			ok, ra := h.AllowLookup(c.Request())
			retry = ra
			return ok
		}
	}
	r, ok, err := h.views.Lookup(c.Request().Context(), c.Param("slug"), allow)
	if errors.Is(err, protocol.ErrTooManyLookups) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(retry))
		return jsonError(c, http.StatusTooManyRequests, protocol.CodeRateLimited, protocol.ErrTooManyLookups.Message)
	}
	if err != nil {
		e := protocol.Unavailable(err)
		c.Response().Header().Set("Retry-After", "2")
		return jsonError(c, http.StatusServiceUnavailable, e.Code, e.Message)
	}
	if !ok {
		return jsonError(c, http.StatusNotFound, "not_found", "No such waiting room.")
	}
	n, err := room.ParseTicket(r.TicketKey, r.View.ID, c.QueryParam("ticket"))
	if err != nil {
		return jsonError(c, http.StatusUnauthorized, "bad_ticket", "The ticket is missing or not valid for this waiting room.")
	}
	if o := c.Request().Header.Get("Origin"); o != "" && !h.originAllowed(c, o, r) {
		return jsonError(c, http.StatusForbidden, "forbidden", "This origin may not open the socket.")
	}
	key := ticketKey{room: r.View.ID, number: n}
	if err := h.reserve(key); err != nil {
		return refuse(c, err)
	}
	conn, err := h.upgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		h.unreserve(key)
		return nil // the upgrader has answered
	}
	cl := &client{hub: h, conn: conn, number: n, ticket: key, queue: make([]*websocket.PreparedMessage, 0, sendBuffer)}
	rh := h.join(r, cl)
	if rh == nil {
		cl.close() // the hub closed during the upgrade
		return nil
	}
	if pm := h.prepare(r); pm != nil {
		cl.offer(pm)
	}
	h.wg.Add(1)
	go h.reader(cl, rh)
	return nil
}

// originAllowed accepts the page's own host and the room's shop domains.
func (h *Hub) originAllowed(c echo.Context, origin string, r *front.Room) bool {
	if _, ok := returnurl.Check(origin+"/", append([]string{hostOnly(c.Request().Host)}, r.View.Config.Domains...)); ok {
		return true
	}
	return origin == "http://"+c.Request().Host || origin == "https://"+c.Request().Host
}

func hostOnly(hostport string) string {
	for i := len(hostport) - 1; i >= 0; i-- {
		if hostport[i] == ':' {
			return hostport[:i]
		}
		if hostport[i] == ']' {
			break
		}
	}
	return hostport
}

// join turns cl's reservation into a socket of room r. The socket is added
// under the hub's lock, so no broadcast can remove the room's entry between
// the lookup and the add (a socket in a removed entry gets no frame again).
// It returns nil, and gives the reservation back, once the hub is closed.
func (h *Hub) join(r *front.Room, cl *client) *roomHub {
	if h.beforeJoin != nil {
		h.beforeJoin()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.upgrading--
	if h.closed {
		h.releaseTicketLocked(cl.ticket)
		return nil
	}
	rh := h.rooms[r.View.ID]
	if rh == nil {
		rh = &roomHub{conns: map[*client]struct{}{}, latest: r}
		h.rooms[r.View.ID] = rh
	}
	h.sockets[cl] = struct{}{}
	rh.mu.Lock()
	cl.rh = rh
	rh.conns[cl] = struct{}{}
	rh.mu.Unlock()
	return rh
}

// leave removes cl from the hub and closes it; a second call does nothing
// more.
func (h *Hub) leave(rh *roomHub, cl *client) {
	h.mu.Lock()
	if _, ok := h.sockets[cl]; ok {
		delete(h.sockets, cl)
		h.releaseTicketLocked(cl.ticket)
	}
	rh.mu.Lock()
	delete(rh.conns, cl)
	rh.mu.Unlock()
	h.mu.Unlock()
	cl.close()
}

// writer writes cl's queued frames one after another and ends when the
// queue is empty, or, once the socket is closed, after saying goodbye.
func (h *Hub) writer(cl *client) {
	defer h.wg.Done()
	for {
		cl.mu.Lock()
		if cl.closed || len(cl.queue) == 0 {
			closed := cl.closed
			cl.writing = false
			cl.mu.Unlock()
			if closed {
				cl.goAway()
			}
			return
		}
		pm := cl.queue[0]
		cl.queue = append(cl.queue[:0], cl.queue[1:]...)
		cl.mu.Unlock()
		_ = cl.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := cl.conn.WritePreparedMessage(pm); err != nil {
			h.leave(cl.rh, cl) // the next turn sees it closed
		}
	}
}

// reader drains control frames; any read error ends the socket.
func (h *Hub) reader(cl *client, rh *roomHub) {
	defer h.wg.Done()
	cl.conn.SetReadLimit(512)
	for {
		_ = cl.conn.SetReadDeadline(time.Now().Add(5 * time.Minute))
		if _, _, err := cl.conn.NextReader(); err != nil {
			h.leave(rh, cl)
			_ = cl.conn.Close()
			return
		}
	}
}

func (h *Hub) prepare(r *front.Room) *websocket.PreparedMessage {
	f := FrameOf(r.View, h.now())
	f.Stale = h.views.Stale(r.View.ID)
	return Prepare(f)
}

// Prepare encodes frame v as JSON once for every socket it goes to (and,
// where compression was negotiated, compresses it once); nil if it cannot
// be encoded.
func Prepare(v any) *websocket.PreparedMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
	if err != nil {
		return nil
	}
	return pm
}

func (h *Hub) loop() {
	defer h.wg.Done()
	t := time.NewTicker(Tick)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
			h.broadcast()
		case <-h.kick:
			h.pushChanged()
		}
	}
}

// pushChanged pushes the rooms changed since the last look that had no
// frame for a Tick; the others stay dirty for the next tick, so a busy
// room gets at most about two frames per Tick.
func (h *Hub) pushChanged() {
	now := h.now()
	h.mu.Lock()
	changed := h.changedRooms
	h.changedRooms = make(map[string]*roomHub, len(changed))
	h.mu.Unlock()
	for _, rh := range changed {
		rh.mu.Lock()
		if !rh.dirty || len(rh.conns) == 0 || now.Sub(rh.sentAt) < Tick {
			rh.mu.Unlock()
			continue
		}
		h.sendLocked(rh, now)
	}
}

// broadcast pushes one frame to every socket of each changed (or quiet for
// Keepalive) room. A socket whose buffer is full is dropped.
func (h *Hub) broadcast() {
	now := h.now()
	h.mu.Lock()
	rooms := make(map[string]*roomHub, len(h.rooms))
	for id, rh := range h.rooms {
		rooms[id] = rh
	}
	h.mu.Unlock()
	for id, rh := range rooms {
		rh.mu.Lock()
		if len(rh.conns) == 0 {
			rh.mu.Unlock()
			h.mu.Lock()
			if rh2 := h.rooms[id]; rh2 == rh {
				rh.mu.Lock()
				if len(rh.conns) == 0 {
					delete(h.rooms, id)
				}
				rh.mu.Unlock()
			}
			h.mu.Unlock()
			continue
		}
		if !rh.dirty && now.Sub(rh.sentAt) < Keepalive {
			rh.mu.Unlock()
			continue
		}
		h.sendLocked(rh, now)
	}
}

// sendLocked pushes rh's latest frame to every socket of the room. It is
// called with rh.mu held and releases it before the frame is encoded and
// offered.
func (h *Hub) sendLocked(rh *roomHub, now time.Time) {
	r := rh.latest
	rh.dirty, rh.sentAt = false, now
	presence := r.View.Config.Abandon.Enabled && now.Sub(rh.presence) >= presenceEvery
	if presence {
		rh.presence = now
	}
	conns := make([]*client, 0, len(rh.conns))
	for cl := range rh.conns {
		conns = append(conns, cl)
	}
	rh.mu.Unlock()
	pm := h.prepare(r)
	if pm == nil {
		return
	}
	for _, cl := range conns {
		if !cl.offer(pm) {
			h.leave(rh, cl) // too slow or gone: drop it, the page falls back to polling
		}
		// A ticket of a restore's jump is reported until the grain places
		// it (actors/room/restore.go), with or without abandon detection.
		if presence || r.View.Unplaced(cl.number) {
			h.views.Seen(r.View.ID, cl.number)
		}
	}
}

// Sockets returns how many sockets this node holds, upgrades under way
// included (as the per-node limit counts them).
func (h *Hub) Sockets() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sockets) + h.upgrading
}

// Close refuses new sockets, drops every socket and stops the broadcaster.
// It waits for the sockets' goroutines at most closeWait, so that a stuck
// connection cannot hold up the node's shutdown; it reports whether they
// all ended.
func (h *Hub) Close() bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return true
	}
	h.closed = true
	conns := make([]*client, 0, len(h.sockets))
	for cl := range h.sockets {
		conns = append(conns, cl)
	}
	h.mu.Unlock()
	close(h.done)
	for _, cl := range conns {
		cl.close()
		_ = cl.conn.Close()
	}
	ended := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return true
	case <-time.After(h.closeWait):
		h.log.Warn("waiting-page sockets did not end in time", "wait", h.closeWait)
		return false
	}
}
