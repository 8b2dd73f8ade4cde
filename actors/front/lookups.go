package front

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/lru"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// maxMisses bounds the unknown room names a node remembers as unknown
// (for missTTL, about 100 bytes each); beyond it the least recently asked
// is forgotten first, and asking it again is a lookup again.
const maxMisses = 1 << 14

// slugLookups asks the directory for room names this node does not know:
// one lookup in flight per name, the others asking it wait for its
// answer; names found unknown are remembered for missTTL in a bounded
// table. It is safe for concurrent use.
type slugLookups struct {
	mu       sync.Mutex // guards misses and inflight
	misses   *lru.Cache[string, time.Time]
	inflight map[string]*slugLookup
	// calls counts the lookups sent to the directory.
	calls atomic.Uint64
}

// slugLookup is one lookup in flight; done is closed once id (empty: no
// such room) and err are set.
type slugLookup struct {
	done chan struct{}
	id   string
	err  error
}

func newSlugLookups() *slugLookups {
	return &slugLookups{misses: lru.New[string, time.Time](maxMisses), inflight: map[string]*slugLookup{}}
}

// resolve returns slug's room id ("" for no such room). A lookup the
// directory must answer is first allowed by allow (nil: always), which
// charges the client's budget; one refused is ErrTooManyLookups. A name
// with a lookup in flight waits for it and costs nothing.
func (l *slugLookups) resolve(ctx context.Context, c *Client, slug string, now time.Time, allow func() bool) (string, error) {
	l.mu.Lock()
	if at, ok := l.misses.Get(slug); ok && now.Sub(at) < missTTL {
		l.mu.Unlock()
		return "", nil
	}
	if f, ok := l.inflight[slug]; ok {
		l.mu.Unlock()
		select {
		case <-f.done:
			return f.id, f.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if allow != nil && !allow() {
		l.mu.Unlock()
		return "", protocol.ErrTooManyLookups
	}
	f := &slugLookup{done: make(chan struct{})}
	l.inflight[slug] = f
	l.mu.Unlock()

	// The lookup answers everyone waiting for it: its first caller
	// leaving does not cancel it.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupLimit)
	f.id, f.err = c.Resolve(lctx, slug)
	cancel()
	l.calls.Add(1)
	missing := protocol.IsCode(f.err, protocol.CodeNotFound)
	if missing {
		f.id, f.err = "", nil
	}
	l.mu.Lock()
	delete(l.inflight, slug)
	if missing {
		l.misses.Put(slug, now)
	}
	l.mu.Unlock()
	close(f.done)
	return f.id, f.err
}

// Lookups returns how many lookups of room names this node sent to the
// directory.
func (v *Views) Lookups() uint64 { return v.lookups.calls.Load() }
