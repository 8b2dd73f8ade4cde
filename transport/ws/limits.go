package ws

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// Limits bound the waiting-page sockets a node holds. Both are required: a
// zero limit is refused, never read as "unlimited".
type Limits struct {
	// PerTicket is the most sockets one ticket may hold open on this node
	// (the page open in a few tabs); beyond it the upgrade is answered 429.
	PerTicket int
	// PerNode is the most waiting-page sockets this node holds, upgrades
	// under way included; beyond it the upgrade is answered 503 and the
	// page polls instead.
	PerNode int
}

// DefaultPerTicket is the sockets one ticket may hold: a visitor with the
// page open in a few tabs.
const DefaultPerTicket = 4

// DefaultPerNode is the sockets a node holds unless told otherwise: under
// the open-file limit of a default container, where each socket is a file.
const DefaultPerNode = 20_000

// refusedRetryAfter is what a refused page is told to wait before trying
// the socket again; it polls meanwhile.
const refusedRetryAfter = 30

func (l Limits) check() error {
	if l.PerTicket < 1 {
		return fmt.Errorf("sockets per ticket %d: want at least 1", l.PerTicket)
	}
	if l.PerNode < 1 {
		return fmt.Errorf("sockets per node %d: want at least 1", l.PerNode)
	}
	return nil
}

// ticketKey names one ticket: a room and the number it binds.
type ticketKey struct {
	room   string
	number uint64
}

var (
	errNodeFull   = errors.New("node full")
	errTicketFull = errors.New("ticket full")
	errClosed     = errors.New("hub closed")
)

// reserve counts a socket of ticket k before its upgrade, so that upgrades
// under way count against the limits too. It fails when the hub is closed
// or a limit is reached.
func (h *Hub) reserve(k ticketKey) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return errClosed
	case len(h.sockets)+h.upgrading >= h.limits.PerNode:
		h.refusedNode.Inc()
		return errNodeFull
	case h.tickets[k] >= h.limits.PerTicket:
		h.refusedTicket.Inc()
		return errTicketFull
	}
	h.upgrading++
	h.tickets[k]++
	return nil
}

// unreserve gives back the reservation of an upgrade that failed.
func (h *Hub) unreserve(k ticketKey) {
	h.mu.Lock()
	h.upgrading--
	h.releaseTicketLocked(k)
	h.mu.Unlock()
}

func (h *Hub) releaseTicketLocked(k ticketKey) {
	if h.tickets[k] <= 1 {
		delete(h.tickets, k)
		return
	}
	h.tickets[k]--
}

// refuse answers an upgrade the limits (or shutdown) refuse, before the
// upgrade, with the contract's JSON error.
func refuse(c echo.Context, err error) error {
	c.Response().Header().Set("Retry-After", strconv.Itoa(refusedRetryAfter))
	switch {
	case errors.Is(err, errTicketFull):
		return jsonError(c, http.StatusTooManyRequests, "too_many_sockets",
			"This ticket has as many sockets open as it may; close another tab or let the page poll.")
	case errors.Is(err, errNodeFull):
		return jsonError(c, http.StatusServiceUnavailable, "busy",
			"This server holds as many waiting-page sockets as it may; the page polls instead.")
	default:
		return jsonError(c, http.StatusServiceUnavailable, "unavailable", "The server is shutting down; try again shortly.")
	}
}

// Collectors are the hub's metrics: the open sockets and the upgrades the
// limits refused, by reason.
func (h *Hub) Collectors() []prometheus.Collector {
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "aditus_queue_page_sockets", Help: "Waiting-page WebSockets open on this node.",
	}, func() float64 { return float64(h.Sockets()) })
	return []prometheus.Collector{open, h.refused}
}

func newRefused() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aditus_queue_page_sockets_refused_total",
		Help: "Waiting-page WebSocket upgrades refused: reason ticket (per-ticket limit) or node (per-node limit).",
	}, []string{"reason"})
}
