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
//
// A key may also belong to wider groups (an IPv6 /64 to its /56 and /48,
// see clientaddr.Wider), each with a bucket of its own, scaled up: a
// request needs a token in every one, and one refused by a group's bucket
// does not add its own key to the table. A client holding a whole prefix
// then gets the group's burst, not a fresh burst per key, and cannot push
// other clients' buckets out of the table.
package ratelimit

import (
	"container/list"
	"errors"
	"math"
	"strconv"
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
	// Groups are the wider groups of a key (nil: none), widest first;
	// group i's bucket has Scales[i] times the rate and burst.
	Groups func(key string) []string
	// Scales are the groups' factors, one per group Groups returns.
	Scales []float64
}

// Limiter is a table of token buckets. It is safe for concurrent use.
type Limiter struct {
	rate     float64
	burst    float64
	capacity int
	now      func() time.Time
	groups   func(string) []string
	scales   []float64

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
	scale  float64 // of the rate and burst: 1 for a key, more for a group
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
	case c.Groups != nil && len(c.Scales) == 0:
		return nil, errors.New("ratelimit: Groups need their Scales")
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
		groups:   c.Groups,
		scales:   c.Scales,
		lru:      list.New(),
		buckets:  make(map[string]*list.Element),
	}, nil
}

// Allow takes one token from key's bucket if it has one. When it has none
// it takes nothing and says how long until one is there.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	return l.AllowN(key, 1)
}

// AllowN takes n tokens from key's bucket, and from its groups' buckets,
// if they have them all; otherwise it takes nothing and says how long
// until they will. n above the burst can never be granted: the wait
// returned is then the time to fill the bucket.
func (l *Limiter) AllowN(key string, n float64) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if wait := l.groupsWaitLocked(key, n); wait > 0 {
		return false, wait
	}
	b := l.bucketLocked(key, 1)
	if b.tokens < n-epsilon {
		return false, l.waitLocked(b, math.Min(n, l.burst))
	}
	b.tokens = math.Max(0, b.tokens-n)
	for i, g := range l.groupKeys(key) {
		gb := l.bucketLocked(g, l.scales[min(i, len(l.scales)-1)])
		gb.tokens = math.Max(0, gb.tokens-n)
	}
	return true, 0
}

// groupKeys are the table keys of key's groups.
func (l *Limiter) groupKeys(key string) []string {
	if l.groups == nil {
		return nil
	}
	gs := l.groups(key)
	for i, g := range gs {
		gs[i] = "\x00" + strconv.Itoa(i) + "\x00" + g
	}
	return gs
}

// groupsWaitLocked is how long until every group of key holds n tokens (0:
// they do now). It adds no bucket: a group it does not know is full.
func (l *Limiter) groupsWaitLocked(key string, n float64) time.Duration {
	var wait time.Duration
	for _, g := range l.groupKeys(key) {
		e, found := l.buckets[g]
		if !found {
			continue
		}
		b := e.Value.(*bucket)
		l.refillLocked(b)
		if b.tokens < n-epsilon {
			wait = max(wait, l.waitLocked(b, math.Min(n, l.burst*b.scale)))
		}
	}
	return wait
}

// Wait says how long until key's bucket holds a token, without taking
// one: 0 when it holds one now. A key the limiter does not know has a
// full bucket and is not added.
func (l *Limiter) Wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	wait := l.groupsWaitLocked(key, 1)
	e, found := l.buckets[key]
	if !found {
		return wait
	}
	b := e.Value.(*bucket)
	l.refillLocked(b)
	if b.tokens >= 1-epsilon {
		return wait
	}
	return max(wait, l.waitLocked(b, 1))
}

// Tokens returns how many tokens key can take now: its bucket's (Burst
// for a key the limiter does not know), or fewer when one of its groups
// holds fewer.
func (l *Limiter) Tokens(key string) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	tokens := l.burst
	for _, k := range append(l.groupKeys(key), key) {
		if e, found := l.buckets[k]; found {
			b := e.Value.(*bucket)
			l.refillLocked(b)
			tokens = math.Min(tokens, b.tokens)
		}
	}
	return tokens
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
func (l *Limiter) bucketLocked(key string, scale float64) *bucket {
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
	b := &bucket{key: key, scale: scale, tokens: l.burst * scale, at: l.now()}
	l.buckets[key] = l.lru.PushFront(b)
	return b
}

func (l *Limiter) refillLocked(b *bucket) {
	now := l.now()
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(l.burst*b.scale, b.tokens+d.Seconds()*l.rate*b.scale)
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
	return time.Duration(math.Ceil(missing / (l.rate * b.scale) * float64(time.Second)))
}
