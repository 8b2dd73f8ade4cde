package proxy

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/lru"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// waitingAnswers bounds the room's place in line that this node remembers
// for waiting cookies (about 150 bytes each). Beyond it the least recently
// seen is forgotten, and its next request asks the grain again.
const waitingAnswers = 1 << 16

// waitingBudget bounds the calls to a room's grain that requests with a
// cookie make. A waiter's page checks once per refresh interval; a request
// of the same cookie sooner than that is answered from the room's last
// answer to it, not the grain. And every client address has a budget of
// grain calls for its cookies: the visitors its address budget lets in
// (a burst and a minute's worth) each checking once per refresh interval.
// Beyond it a request gets the waiting page with no place and a
// Retry-After, as a first request over its budget does. The address
// budget is the one in force: a change at runtime replaces the buckets
// (gate.learn). It is safe for concurrent use.
type waitingBudget struct {
	// fresh is how long an answer stands: the refresh interval, less a
	// tenth for the time a page takes to come back.
	fresh   time.Duration
	refresh time.Duration
	addrs   *clientaddr.Resolver
	tokens  atomic.Pointer[ratelimit.Limiter]

	mu   sync.Mutex // guards last
	last *lru.Cache[[visitorSize]byte, lastAnswer]

	// cached counts requests answered from the last answer; refused,
	// those over their address's budget.
	cached, refused atomic.Uint64
}

// lastAnswer is the room's last answer to a waiting visitor, and when.
type lastAnswer struct {
	at time.Time
	st capacity.Status
}

func newWaitingBudget(b room.AddressBudget, refresh time.Duration, now func() time.Time) (*waitingBudget, error) {
	l, err := waitingLimiter(b, refresh, now)
	if err != nil {
		return nil, err
	}
	wb := &waitingBudget{fresh: refresh - refresh/10, refresh: refresh,
		last: lru.New[[visitorSize]byte, lastAnswer](waitingAnswers)}
	wb.tokens.Store(l)
	return wb, nil
}

// waitingLimiter is the buckets of grain calls for the cookies of one
// address under address budget b: b's visitors (a burst and a minute's
// worth) each checking once per refresh interval.
func waitingLimiter(b room.AddressBudget, refresh time.Duration, now func() time.Time) (*ratelimit.Limiter, error) {
	b = b.Effective()
	visitors := float64(b.Burst) + b.PerMinute
	l, err := ratelimit.New(ratelimit.PerAddress(visitors/max(refresh, time.Second).Seconds(),
		int(min(visitors, room.MaxBudgetBurst)), now))
	if err != nil {
		return nil, fmt.Errorf("waiting budget: %w", err)
	}
	return l, nil
}

// recent returns the last answer to visitor id when it is younger than
// the refresh interval at now.
func (wb *waitingBudget) recent(id [visitorSize]byte, now time.Time) (capacity.Status, time.Duration, bool) {
	wb.mu.Lock()
	a, ok := wb.last.Get(id)
	wb.mu.Unlock()
	if !ok || now.Sub(a.at) >= wb.fresh {
		return capacity.Status{}, 0, false
	}
	wb.cached.Add(1)
	return a.st, wb.fresh - now.Sub(a.at), true
}

// take spends a grain call of r's client address, or says how long until
// it has one; a refusal is counted.
func (wb *waitingBudget) take(r *http.Request) (bool, time.Duration) {
	ok, wait := wb.tokens.Load().Allow(clientaddr.Key(wb.addrs.Client(r)))
	if !ok {
		wb.refused.Add(1)
	}
	return ok, wait
}

// remember keeps the room's answer st to visitor id at now: a place in
// line is kept, anything else (a slot, a provisional place still to be
// confirmed) forgets the last answer.
func (wb *waitingBudget) remember(id [visitorSize]byte, st capacity.Status, now time.Time) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if st.Admitted || st.Provisional || st.Position == 0 {
		wb.last.Remove(id)
		return
	}
	wb.last.Put(id, lastAnswer{at: now, st: st})
}

// answerKnown answers a request with cookie v without the grain when it
// can: from the last answer when the page came back sooner than the
// refresh interval, or with a refusal when the address is over its
// budget. It reports whether it answered; pass is set for a slot holder
// whose cookie is still good, who goes on when over the budget.
func (g *gate) answerKnown(w http.ResponseWriter, r *http.Request, v Visitor, now time.Time) (answered, pass bool) {
	if st, left, ok := g.waiting.recent(v.ID, now); ok {
		w.Header().Set("Retry-After", ratelimit.RetryAfter(left))
		g.wait(w, st.Position, st.Waiting)
		return true, false
	}
	if ok, wait := g.waiting.take(r); !ok {
		if v.Expires > now.UnixNano() && !g.wasReleased(v) {
			return true, true
		}
		g.refuse(w, wait)
		return true, false
	}
	return false, false
}
