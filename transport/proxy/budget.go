package proxy

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// addressBudget limits the new visitors (first requests without a cookie)
// one client address brings to a capacity room on this node: a token
// bucket per address (an IPv4 address, an IPv6 /64; X-Forwarded-For only
// from trusted proxies). A visitor who keeps the cookie spends one token
// for the whole visit; a client that drops cookies spends one a request.
// It is safe for concurrent use.
type addressBudget struct {
	addrs *clientaddr.Resolver
	// tokens is replaced when the room's budget changes at runtime
	// (runtime.go).
	tokens atomic.Pointer[ratelimit.Limiter]
	// refused counts first requests answered without a place.
	refused atomic.Uint64
}

// newAddressBudget returns the budget cfg (the defaults stand in for unset
// fields: no room is without one).
func newAddressBudget(cfg room.AddressBudget, addrs *clientaddr.Resolver, now func() time.Time) (*addressBudget, error) {
	l, err := budgetLimiter(cfg, now)
	if err != nil {
		return nil, err
	}
	b := &addressBudget{addrs: addrs}
	b.tokens.Store(l)
	return b, nil
}

// budgetLimiter is the token buckets of budget cfg.
func budgetLimiter(cfg room.AddressBudget, now func() time.Time) (*ratelimit.Limiter, error) {
	cfg = cfg.Effective()
	l, err := ratelimit.New(ratelimit.PerAddress(cfg.PerMinute/60, cfg.Burst, now))
	if err != nil {
		return nil, fmt.Errorf("address budget: %w", err)
	}
	return l, nil
}

// take spends a token of r's client address, or says how long until it
// has one; a refusal is counted.
func (b *addressBudget) take(r *http.Request) (ok bool, retryAfter time.Duration) {
	ok, retryAfter = b.tokens.Load().Allow(clientaddr.Key(b.addrs.Client(r)))
	if !ok {
		b.refused.Add(1)
	}
	return ok, retryAfter
}
