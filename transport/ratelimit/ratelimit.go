// Package ratelimit keeps a token bucket per key (a client address, most
// often) in a bounded table, so that a budget per client costs a fixed
// amount of memory however many clients come.
//
// A bucket holds at most Burst tokens and refills at Rate tokens a second.
// The table keeps at most Capacity keys; beyond that the key used least
// recently is forgotten. A forgotten key starts again with a full bucket,
// which is what an idle key would have had anyway: with a capacity well
// above the number of clients active within one refill period, eviction
// never frees a client from its budget. Evictions are counted, so an
// operator sees when the table is too small.
package ratelimit

import (
	"container/list"
	"errors"
	"math"
	"sync"
	"time"
)

// Config sets a limiter's budget. Every field must be set: a zero rate,
// burst or capacity is refused, never read as "unlimited".
type Config struct {
	// Rate is how many tokens a key regains per second.
	Rate float64
	// Burst is how many tokens a key holds at most, and has at first.
	Burst int
	// Capacity is how many keys the limiter remembers at most.
	Capacity int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Limiter is a table of token buckets. It is safe for concurrent use.
type Limiter struct {
	rate     float64
	burst    float64
	capacity int
	now      func() time.Time

	mu      sync.Mutex // guards lru, buckets and evicted
	lru     *list.List // of *bucket, most recently used at the front
	buckets map[string]*list.Element
	evicted uint64
}

// epsilon absorbs the rounding of refills: a client that waited exactly
// the announced time finds its token there.
const epsilon = 1e-9

type bucket struct {
	key    string
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// New returns a limiter, or an error naming the field that is not set.
func New(c Config) (*Limiter, error) {
	switch {
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0):
		return nil, errors.New("ratelimit: Rate must be a positive number of tokens per second")
	case c.Burst < 1:
		return nil, errors.New("ratelimit: Burst must be at least 1")
	case c.Capacity < 1:
		return nil, errors.New("ratelimit: Capacity must be at least 1")
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Limiter{
		rate:     c.Rate,
		burst:    float64(c.Burst),
		capacity: c.Capacity,
		now:      now,
		lru:      list.New(),
		buckets:  make(map[string]*list.Element),
	}, nil
}

// Allow takes one token from key's bucket if it has one. When it has none
// it takes nothing and says how long until one is there.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	return l.AllowN(key, 1)
}

// AllowN takes n tokens from key's bucket if it has them all; otherwise it
// takes nothing and says how long until it will. n above the burst can
// never be granted: the wait returned is then the time to fill the bucket.
func (l *Limiter) AllowN(key string, n float64) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(key)
	if b.tokens >= n-epsilon {
		b.tokens = math.Max(0, b.tokens-n)
		return true, 0
	}
	return false, l.waitLocked(b, math.Min(n, l.burst))
}

// Wait says how long until key's bucket holds a token, without taking
// one: 0 when it holds one now. A key the limiter does not know has a
// full bucket and is not added.
func (l *Limiter) Wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, found := l.buckets[key]
	if !found {
		return 0
	}
	b := e.Value.(*bucket)
	l.refillLocked(b)
	if b.tokens >= 1-epsilon {
		return 0
	}
	return l.waitLocked(b, 1)
}

// Tokens returns how many tokens key's bucket holds now (Burst for a key
// the limiter does not know).
func (l *Limiter) Tokens(key string) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, found := l.buckets[key]
	if !found {
		return l.burst
	}
	b := e.Value.(*bucket)
	l.refillLocked(b)
	return b.tokens
}

// Len returns how many keys the limiter remembers.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// Evicted returns how many keys were forgotten to stay within Capacity.
func (l *Limiter) Evicted() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted
}

// bucketLocked finds or makes key's bucket, brought up to date and marked
// as the most recently used.
func (l *Limiter) bucketLocked(key string) *bucket {
	if e, found := l.buckets[key]; found {
		l.lru.MoveToFront(e)
		b := e.Value.(*bucket)
		l.refillLocked(b)
		return b
	}
	if l.lru.Len() >= l.capacity {
		oldest := l.lru.Back()
		l.lru.Remove(oldest)
		delete(l.buckets, oldest.Value.(*bucket).key)
		l.evicted++
	}
	b := &bucket{key: key, tokens: l.burst, at: l.now()}
	l.buckets[key] = l.lru.PushFront(b)
	return b
}

func (l *Limiter) refillLocked(b *bucket) {
	now := l.now()
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(l.burst, b.tokens+d.Seconds()*l.rate)
	}
	b.at = now
}

// waitLocked is the time until b holds n tokens, rounded up so that a
// client that waits exactly that long is let in.
func (l *Limiter) waitLocked(b *bucket, n float64) time.Duration {
	missing := n - b.tokens
	if missing <= epsilon {
		return 0
	}
	return time.Duration(math.Ceil(missing / l.rate * float64(time.Second)))
}
