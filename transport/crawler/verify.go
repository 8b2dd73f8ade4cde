package crawler

import (
	"container/list"
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Resolver is the DNS a Verifier asks; *net.Resolver is one.
type Resolver interface {
	// LookupAddr returns the reverse names of addr.
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	// LookupNetIP returns the addresses of host ("ip" for both families).
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config sets a Verifier's bounds. Every field must be set.
type Config struct {
	// DNS answers the lookups (net.DefaultResolver in production).
	DNS Resolver
	// Timeout bounds one verification (the reverse lookup and the forward
	// lookups together).
	Timeout time.Duration
	// TTL is how long an answer is cached; NegativeTTL how long a failed
	// or refused verification is.
	TTL, NegativeTTL time.Duration
	// Capacity is the most answers cached; the one used least recently is
	// forgotten beyond it.
	Capacity int
	// Concurrent is the most verifications in flight at once; beyond it a
	// request is not verified (it waits in line like anybody).
	Concurrent int
	// Now is the clock (time.Now in production).
	Now func() time.Time
}

// Defaults returns the production configuration over DNS dns.
func Defaults(dns Resolver) Config {
	return Config{DNS: dns, Timeout: 2 * time.Second, TTL: time.Hour, NegativeTTL: 5 * time.Minute,
		Capacity: 10_000, Concurrent: 32, Now: time.Now}
}

// maxNames bounds the reverse names of one address that are looked up
// forward: a crawler's address has one.
const maxNames = 4

// Verifier checks crawlers' addresses by DNS and caches the answers.
type Verifier struct {
	c   Config
	sem chan struct{}

	mu sync.Mutex
	// mu guards cache, order and flight.
	cache  map[cacheKey]*list.Element
	order  *list.List // of *entry, most recently used first
	flight map[cacheKey]*call
}

type cacheKey struct {
	crawler *Crawler
	addr    netip.Addr
}

type entry struct {
	key     cacheKey
	ok      bool
	expires time.Time
}

// call is a verification in flight; others asking the same wait for it.
type call struct {
	done chan struct{}
	ok   bool
}

// NewVerifier returns a verifier, or an error naming the bound not set.
func NewVerifier(c Config) (*Verifier, error) {
	switch {
	case c.DNS == nil:
		return nil, errors.New("crawler verifier: no DNS resolver")
	case c.Timeout <= 0, c.TTL <= 0, c.NegativeTTL <= 0:
		return nil, errors.New("crawler verifier: timeout and TTLs must be positive")
	case c.Capacity < 1, c.Concurrent < 1:
		return nil, errors.New("crawler verifier: capacity and concurrency must be at least 1")
	case c.Now == nil:
		return nil, errors.New("crawler verifier: no clock")
	}
	return &Verifier{c: c, sem: make(chan struct{}, c.Concurrent), cache: map[cacheKey]*list.Element{},
		order: list.New(), flight: map[cacheKey]*call{}}, nil
}

// Verify reports whether addr belongs to crawler cr: one of its reverse
// names lies in cr's domains and resolves back to addr. An invalid address,
// a DNS failure, a timeout or too many verifications at once answer false.
func (v *Verifier) Verify(ctx context.Context, cr *Crawler, addr netip.Addr) bool {
	if cr == nil || !addr.IsValid() {
		return false
	}
	addr = addr.Unmap()
	k := cacheKey{cr, addr}
	now := v.c.Now()
	v.mu.Lock()
	if el, ok := v.cache[k]; ok {
		e := el.Value.(*entry)
		if now.Before(e.expires) {
			v.order.MoveToFront(el)
			v.mu.Unlock()
			return e.ok
		}
		v.order.Remove(el)
		delete(v.cache, k)
	}
	if c, ok := v.flight[k]; ok {
		v.mu.Unlock()
		select {
		case <-c.done:
			return c.ok
		case <-ctx.Done():
			return false
		}
	}
	select {
	case v.sem <- struct{}{}:
	default:
		v.mu.Unlock()
		return false // too many at once: not cached, tried again later
	}
	c := &call{done: make(chan struct{})}
	v.flight[k] = c
	v.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.c.Timeout)
	ok := v.lookup(ctx, cr, addr)
	cancel()
	<-v.sem

	v.mu.Lock()
	delete(v.flight, k)
	ttl := v.c.NegativeTTL
	if ok {
		ttl = v.c.TTL
	}
	v.storeLocked(&entry{key: k, ok: ok, expires: v.c.Now().Add(ttl)})
	v.mu.Unlock()
	c.ok = ok
	close(c.done)
	return ok
}

// lookup is the documented check: reverse, domain, forward, same address.
func (v *Verifier) lookup(ctx context.Context, cr *Crawler, addr netip.Addr) bool {
	names, err := v.c.DNS.LookupAddr(ctx, addr.String())
	if err != nil {
		return false
	}
	tried := 0
	for _, name := range names {
		if !cr.InDomain(name) {
			continue
		}
		if tried++; tried > maxNames {
			return false
		}
		addrs, err := v.c.DNS.LookupNetIP(ctx, "ip", name)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if a.Unmap() == addr {
				return true
			}
		}
	}
	return false
}

func (v *Verifier) storeLocked(e *entry) {
	v.cache[e.key] = v.order.PushFront(e)
	for v.order.Len() > v.c.Capacity {
		old := v.order.Back()
		v.order.Remove(old)
		delete(v.cache, old.Value.(*entry).key)
	}
}

// Len returns how many answers are cached.
func (v *Verifier) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.order.Len()
}

var _ Resolver = (*net.Resolver)(nil)
