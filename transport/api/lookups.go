package api

import (
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// The budget of each client address for room names this node does not
// know (a lookup in the cluster's directory each): 30 at once, then one
// every two seconds. A visitor follows links to rooms that exist, which
// are known after their first request and cost nothing; only someone
// trying names runs out.
const (
	lookupBurst     = 30
	lookupsPerSec   = 0.5
	lookupAddresses = 1 << 16
)

// roomLookups is the per-address budget of lookups of unknown names.
type roomLookups struct {
	addrs   *clientaddr.Resolver
	lim     *ratelimit.Limiter
	refused prometheus.Counter
}

func newRoomLookups(reg prometheus.Registerer, n *front.Front, addrs *clientaddr.Resolver, now func() time.Time) *roomLookups {
	lim, err := ratelimit.New(ratelimit.Config{Rate: lookupsPerSec, Burst: lookupBurst, Capacity: lookupAddresses, Now: now,
		Groups: clientaddr.Wider, Scales: clientaddr.WiderScales})
	if err != nil {
		panic(err) // constants: a programming error
	}
	l := &roomLookups{addrs: addrs, lim: lim, refused: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "aditus_queue_room_lookups_refused_total",
		Help: "Requests for room names this node did not know refused 429: their address was over its budget of lookups."})}
	reg.MustRegister(l.refused)
	if n != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aditus_queue_room_lookups_total",
			Help: "Lookups of room names this node did not know sent to the cluster's directory (one in flight per name)."},
			func() float64 { return float64(n.Views.Lookups()) }))
	}
	return l
}

// AllowLookup charges r's client address one lookup of a room name this
// node does not know; over the budget it counts the refusal and says how
// many seconds until the address has one again. The waiting page's socket
// (transport/ws) shares it, so both count in one budget.
func (s *Server) AllowLookup(r *http.Request) (ok bool, retryAfter int) {
	ok, wait := s.lookups.lim.Allow(clientaddr.Key(s.lookups.addrs.Client(r)))
	if !ok {
		s.lookups.refused.Inc()
	}
	return ok, int(max(1, math.Ceil(wait.Seconds())))
}

// lookup returns the room named slug for request c, its lookup in the
// directory (when this node does not know the name) charged to the
// client's address: over the budget, 429 rate_limited with Retry-After.
// Any other error is the room's unavailability (protocol.Unavailable).
func (s *Server) lookup(c echo.Context, slug string) (*front.Room, bool, error) {
	retry := 0
	allow := func() bool {
		ok, ra := s.AllowLookup(c.Request())
		retry = ra
		return ok
	}
	r, ok, err := s.views.Lookup(c.Request().Context(), slug, allow)
	if errors.Is(err, protocol.ErrTooManyLookups) {
		return nil, false, &Error{Status: http.StatusTooManyRequests, Code: protocol.CodeRateLimited,
			Message: protocol.ErrTooManyLookups.Message, RetryAfter: retry}
	}
	if err != nil {
		return nil, false, protocol.Unavailable(err)
	}
	return r, ok, nil
}
