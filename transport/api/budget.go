package api

import (
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// Per-address budgets of new numbers. Each room has a token bucket per
// client address (clientaddr.Key: an IPv4 address, an IPv6 /64), refilled
// at the room's addressBudget. A join takes a token. Without proof of
// work, an address with none left is answered 429 with Retry-After and no
// number. With proof of work, it is asked for harder work instead: a bit
// more for its first join over budget, one more each time its debt (joins
// over budget, forgiven at the budget's own rate) doubles. A flood then
// pays exponentially for what a visitor gets for one ordinary challenge.
//
// The budgets are this node's: a client spread over several front nodes
// gets a budget at each, which bounds it all the same.

const (
	// budgetRooms bounds the rooms with a table on this node; a room
	// beyond it takes the place of another, whose addresses start again
	// with a full budget.
	budgetRooms = 1024
	// debtBursts is how much debt, in bursts, an address can run up: the
	// harder work stops growing past it (log2(1+64) ≈ 6 more bits).
	debtBursts = 64
	// maxHarderBits caps a harder challenge: 28 bits is minutes of work
	// in a browser, a refusal in all but name.
	maxHarderBits = 28
)

// joinBudgets holds every room's address budget on this node. It is safe
// for concurrent use.
type joinBudgets struct {
	now func() time.Time
	// refused counts joins refused for their address's budget (429), and
	// challenges made harder for it.
	refused *prometheus.CounterVec

	mu    sync.Mutex             // guards rooms
	rooms map[string]*roomBudget // by room ID
}

// roomBudget is one room's tables, for the budget they were made for.
type roomBudget struct {
	cfg room.AddressBudget
	// mu serialises deciding the work of a join and charging for it.
	mu     sync.Mutex
	tokens *ratelimit.Limiter
	// debt counts joins an address made over budget, paid with harder
	// work; it drains at the budget's rate. Its buckets start full: a
	// bucket's missing tokens are the debt.
	debt *ratelimit.Limiter
}

func newJoinBudgets(reg prometheus.Registerer, now func() time.Time) *joinBudgets {
	b := &joinBudgets{now: now, rooms: map[string]*roomBudget{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aditus_queue_address_budget_refusals_total",
			Help: "Joins refused for their address's budget (outcome refused: 429) and challenges made harder for it (outcome harder).",
		}, []string{"outcome"})}
	reg.MustRegister(b.refused)
	return b
}

// of returns room id's tables for budget cfg, made afresh when the budget
// changed.
func (b *joinBudgets) of(id string, cfg room.AddressBudget) *roomBudget {
	cfg = cfg.Effective()
	b.mu.Lock()
	defer b.mu.Unlock()
	if rb, ok := b.rooms[id]; ok && rb.cfg == cfg {
		return rb
	}
	rate := cfg.PerMinute / 60
	tokens, err1 := ratelimit.New(ratelimit.PerAddress(rate, cfg.Burst, b.now))
	debt, err2 := ratelimit.New(ratelimit.Config{Rate: rate, Burst: cfg.Burst * debtBursts, Capacity: ratelimit.Addresses, Now: b.now})
	if err1 != nil || err2 != nil {
		// Effective budgets are valid; this is a programming error.
		panic(fmt.Sprintf("address budget %+v: %v %v", cfg, err1, err2))
	}
	if _, ok := b.rooms[id]; !ok && len(b.rooms) >= budgetRooms {
		for other := range b.rooms {
			delete(b.rooms, other)
			break
		}
	}
	rb := &roomBudget{cfg: cfg, tokens: tokens, debt: debt}
	b.rooms[id] = rb
	return rb
}

// take spends one of key's tokens in room id, or says how long until one
// is there. A refusal is counted.
func (b *joinBudgets) take(id string, cfg room.AddressBudget, key string) (ok bool, retryAfter time.Duration) {
	ok, retryAfter = b.of(id, cfg).tokens.Allow(key)
	if !ok {
		b.refused.WithLabelValues("refused").Inc()
	}
	return ok, retryAfter
}

// allow is take without the wait.
func (b *joinBudgets) allow(id string, cfg room.AddressBudget, key string) bool {
	ok, _ := b.take(id, cfg, key)
	return ok
}

// bits is the work key must prove for a join in room id whose challenges
// have base bits: base while it has a token, more the deeper in debt it
// is. A harder challenge is counted.
func (b *joinBudgets) bits(id string, cfg room.AddressBudget, key string, base int) int {
	rb := b.of(id, cfg)
	if rb.tokens.Tokens(key) >= 1 {
		return base
	}
	b.refused.WithLabelValues("harder").Inc()
	return harderBits(base, rb.debtOf(key), rb.cfg.Burst)
}

// chargeWork decides and charges, in one step, a join from key in room id
// whose solution is solved bits hard while the room asks base bits: with
// a token, base suffices and the token is spent; without one, the work
// must be harder, as deep as key's debt, and the join adds to the debt.
// Both happen under the room's lock, so simultaneous joins from one
// address each see the charge of the others. When the work is short of
// need, nothing is charged and the harder challenge is counted.
func (b *joinBudgets) chargeWork(id string, cfg room.AddressBudget, key string, base, solved int) (need int, ok bool) {
	rb := b.of(id, cfg)
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if ok, _ := rb.tokens.Allow(key); ok {
		return base, true
	}
	need = harderBits(base, rb.debtOf(key), rb.cfg.Burst)
	if solved < need {
		b.refused.WithLabelValues("harder").Inc()
		return need, false
	}
	rb.debt.Allow(key)
	return need, true
}

// debtOf is how many joins key made over budget, less what has drained.
func (rb *roomBudget) debtOf(key string) float64 {
	return float64(rb.cfg.Burst*debtBursts) - rb.debt.Tokens(key)
}

// harderBits is base plus one bit, plus one for each doubling of the debt
// in bursts, at most maxHarderBits.
func harderBits(base int, debt float64, burst int) int {
	extra := 1 + int(math.Log2(1+math.Max(0, debt)/float64(burst)))
	return max(base, min(base+extra, maxHarderBits))
}

// refuseOverBudget answers 429 rate_limited with Retry-After in whole
// seconds, rounded up so that a client waiting that long finds a token.
func refuseOverBudget(h http.Header, wait time.Duration) error {
	h.Set("Retry-After", ratelimit.RetryAfter(wait))
	return errOverBudget
}

var errOverBudget = errorf(http.StatusTooManyRequests, "rate_limited",
	"Too many new numbers from your address; retry after the seconds given.")

// clientKey is the budget key of the request's client address.
func (s *Server) clientKey(c echo.Context) string {
	return clientaddr.Key(s.clients.Client(c.Request()))
}

// admitJoin lets a join of room r go on to take a number, or answers why
// not: 429 for an address over its budget in a room without proof of
// work; 428 for work missing, wrong, or easier than the address now needs
// in a room with it.
func (s *Server) admitJoin(c echo.Context, r *front.Room, sol *powSolution) error {
	cfg := &r.View.Config
	key := s.clientKey(c)
	if on, _ := r.View.PowInForce(); !on {
		if ok, wait := s.budgets.take(r.View.ID, cfg.AddressBudget, key); !ok {
			return refuseOverBudget(c.Response().Header(), wait)
		}
		return nil
	}
	// The work asked as this address's budget stands now; the decision,
	// with the charge, follows in one step.
	_, base := r.View.PowInForce()
	solved, err := s.checkPow(r, sol, s.powBits(r, key))
	if err != nil {
		return err
	}
	if need, ok := s.budgets.chargeWork(r.View.ID, cfg.AddressBudget, key, base, solved); !ok {
		return s.powRefusal(r, s.now(), need, "The waiting room asks for harder work now; solve the fresh challenge.")
	}
	return nil
}
