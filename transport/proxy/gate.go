package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/spent"
)

// storeTimeout bounds one synchronous call to the store on a visitor's
// request; past it, on_store_error decides.
const storeTimeout = 2 * time.Second

// gate enforces one capacity room on this proxy node. An admitted visitor
// is checked from the cookie alone; the store is asked for new visitors,
// waiters, and holders in the last fifth of their session. Holders' requests
// are gathered and sent as one Touch every half second.
type gate struct {
	room       *Room
	id         string // the room's grain identity
	cookieName string
	page       *page
	store      Store
	now        func() time.Time
	log        *slog.Logger
	// secure decides the cookie's Secure attribute (cookie_secure; until
	// New sets it, TLS to this proxy alone).
	secure func(*http.Request) bool
	// budget limits the first requests of each client address.
	budget *addressBudget
	// pow asks new arrivals for proof of work when the room says so.
	pow gatePow
	// waiting bounds the grain calls of requests with a cookie.
	waiting *waitingBudget
	// node names this proxy node in its reports; rt is what it learnt of
	// the room's runtime settings (runtime.go).
	node string
	rt   gateRuntime
	// fileAt is when the file this room comes from was modified (Unix
	// nanoseconds; 0: unknown).
	fileAt int64

	box atomic.Pointer[cookieBox]
	// keyMu serialises fetching the key from the store.
	keyMu  sync.Mutex
	keyTry time.Time
	// unusable is set while the last key read did not open: the room is
	// closed (503) until a read opens.
	unusable atomic.Bool

	// mu guards pending and released.
	mu      sync.Mutex
	pending map[[visitorSize]byte]struct{}
	// released are visitors whose slot the upstream released through this
	// node, until their cookie would have ended: their old cookie no longer
	// admits them here.
	released  map[[visitorSize]byte]int64
	nReleased atomic.Int32
}

func newGate(r *Room, store Store, now func() time.Time, log *slog.Logger) (*gate, error) {
	id := protocol.CapacityID(r.Host, r.Name)
	g := &gate{room: r, id: id, cookieName: "aq_" + id[1:13], store: store, now: now, log: log.With("room", r.Name, "host", r.Host),
		pending: map[[visitorSize]byte]struct{}{}, released: map[[visitorSize]byte]int64{},
		secure: func(r *http.Request) bool { return r.TLS != nil }}
	b, err := newAddressBudget(r.AddressBudget, nil, now)
	if err != nil {
		return nil, err
	}
	g.budget = b
	if g.waiting, err = newWaitingBudget(r.AddressBudget, r.Settings.Refresh, now); err != nil {
		return nil, err
	}
	g.pow.spent = spent.New(maxSpent)
	src := r.Page
	if src == nil {
		src = builtinPage
	}
	g.page = parsePage(src)
	if r.Secret != "" {
		b, err := newCookieBox(secretKey(r.Secret), r.Host, r.Name)
		if err != nil {
			return nil, err
		}
		g.box.Store(b)
	}
	return g, nil
}

// key returns the room's cookie box, fetching the key from the store at
// most twice a second while it is unknown; nil while the store cannot be
// reached or the key does not open (then g.unusable is set).
func (g *gate) key(ctx context.Context) *cookieBox {
	if b := g.box.Load(); b != nil {
		return b
	}
	g.keyMu.Lock()
	defer g.keyMu.Unlock()
	if b := g.box.Load(); b != nil {
		return b
	}
	if g.now().Sub(g.keyTry) < 500*time.Millisecond {
		return nil
	}
	g.keyTry = g.now()
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	k, err := g.store.Key(ctx, g.id)
	if err != nil && !errors.Is(err, ErrKeyUnusable) {
		g.log.Warn("cookie key unavailable", "error", err)
		return nil
	}
	var b *cookieBox
	if err == nil {
		b, err = newCookieBox(k, g.room.Host, g.room.Name)
	}
	if err != nil {
		if !g.unusable.Swap(true) {
			g.log.Error("cookie key does not open: the room answers 503 until it does", "error", err)
		}
		return nil
	}
	g.unusable.Store(false)
	g.box.Store(b)
	return b
}

// admit decides whether request r goes on. When it does not, admit has
// answered the waiting page. ok reports a visitor with a slot (who can be
// released); pass alone (ok false) is a visitor let through by
// on_store_error = "admit".
func (g *gate) admit(w http.ResponseWriter, r *http.Request) (v Visitor, ok, pass bool) {
	now := g.now().UnixNano()
	box, pass := g.keyOrAnswer(w, r)
	if box == nil {
		return v, false, pass
	}
	known := false
	if c, err := r.Cookie(g.cookieName); err == nil {
		if v, err = box.open(c.Value); err == nil {
			known = true
		}
	}
	if known && v.Expires > now && !g.wasReleased(v) {
		renewAt := v.Expires - int64(g.room.Settings.Session)/5
		if now < renewAt {
			g.touch(v.ID)
			return v, true, true
		}
	}
	if !known {
		// The budget first: an address over it is refused before any
		// challenge, and its requests do not count as arrivals, so one
		// address cannot keep proof of work on for everyone.
		if ok, wait := g.budget.take(r); !ok {
			g.refuse(w, wait)
			return v, false, false
		}
		if bits := int(g.pow.bits.Load()); bits > 0 && !g.proved(w, r, box, bits) {
			return v, false, false
		}
		v = newVisitor()
		v.Arrived = now
	} else if answered, pass := g.answerKnown(w, r, v, g.now()); answered {
		return v, pass, pass
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	st, err := g.ask(ctx, v, known)
	if err != nil {
		if v.Expires > now && !g.wasReleased(v) {
			// A holder renewing early: the cookie is still good.
			return v, true, true
		}
		g.log.Warn("capacity store unreachable", "error", err)
		v.Expires = 0
		g.setCookie(w, r, box, v)
		return v, false, g.storeError(w)
	}
	return g.answerStore(w, r, box, v, st, known)
}

// answerStore answers r from the room's answer st for visitor v: the
// cookie of an admitted visitor, or the waiting page with the place.
func (g *gate) answerStore(w http.ResponseWriter, r *http.Request, box *cookieBox, v Visitor, st capacity.Status, known bool) (Visitor, bool, bool) {
	g.setPow(st.Pow)
	if known {
		g.waiting.remember(v.ID, st, g.now())
	}
	if st.Admitted {
		v.Expires = st.Expires
		g.forget(v)
		g.setCookie(w, r, box, v)
		return v, true, true
	}
	v.Expires = 0
	if st.Provisional && st.Arrived > 0 {
		v.Arrived = st.Arrived // the room's clock, which the return is checked against
	}
	g.setCookie(w, r, box, v)
	if st.Provisional {
		g.waitProvisional(w, st)
	} else {
		g.wait(w, st.Position, st.Waiting)
	}
	return v, false, false
}

// keyOrAnswer returns the room's cookie box, or nil once it has answered
// r: 503 while the key does not open (a key that does not open is no
// outage: the room fails closed), and as on_store_error says while the
// store cannot be reached (pass: the request goes on).
func (g *gate) keyOrAnswer(w http.ResponseWriter, r *http.Request) (box *cookieBox, pass bool) {
	if box = g.key(r.Context()); box != nil {
		return box, true
	}
	if g.unusable.Load() {
		g.wait(w, 0, 0)
		return nil, false
	}
	return nil, g.storeError(w)
}

// storeError answers as on_store_error says; it reports whether the
// request goes on.
func (g *gate) storeError(w http.ResponseWriter) bool {
	if g.room.AdmitOnStoreError {
		return true
	}
	g.wait(w, 0, 0)
	return false
}

// wait answers the waiting page: 503, Retry-After, never cached.
func (g *gate) wait(w http.ResponseWriter, position, waiting int) {
	g.waitPage(w, num(position), waiting, int(g.room.Settings.Refresh/time.Second))
}

func (g *gate) setCookie(w http.ResponseWriter, r *http.Request, box *cookieBox, v Visitor) {
	http.SetCookie(w, &http.Cookie{Name: g.cookieName, Value: box.seal(v), Path: "/", HttpOnly: true,
		Secure: g.secure(r), SameSite: http.SameSiteLaxMode})
}

func (g *gate) touch(id [visitorSize]byte) {
	g.mu.Lock()
	g.pending[id] = struct{}{}
	g.mu.Unlock()
}

func (g *gate) wasReleased(v Visitor) bool {
	if g.nReleased.Load() == 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.released[v.ID]
	return ok
}

func (g *gate) forget(v Visitor) {
	if g.nReleased.Load() == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.released[v.ID]; ok {
		delete(g.released, v.ID)
		g.nReleased.Add(-1)
	}
}

// release frees v's slot at once (the upstream's release header) and
// returns the cookie that replaces v's: v's place is given up.
func (g *gate) release(ctx context.Context, r *http.Request, v Visitor) *http.Cookie {
	g.mu.Lock()
	if _, ok := g.released[v.ID]; !ok {
		g.released[v.ID] = v.Expires
		g.nReleased.Add(1)
	}
	delete(g.pending, v.ID)
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := g.store.Release(ctx, g.id, v.idString()); err != nil {
		g.log.Warn("release failed; the slot ends with its session", "error", err)
	}
	box := g.box.Load()
	v.Expires, v.Arrived = 0, 0
	return &http.Cookie{Name: g.cookieName, Value: box.seal(v), Path: "/", HttpOnly: true,
		Secure: g.secure(r), SameSite: http.SameSiteLaxMode}
}

// flush sends the visitors seen since the last flush as one Touch, with
// the challenge pages answered meanwhile and this node's report, and
// forgets released visitors whose cookies have ended. It sends every time,
// even with nobody seen, so that the room can lift proof of work when calm
// and this node learns the room's runtime settings (runtime.go).
func (g *gate) flush(ctx context.Context) {
	now := g.now().UnixNano()
	g.mu.Lock()
	ids := make([]string, 0, len(g.pending))
	for id := range g.pending {
		ids = append(ids, Visitor{ID: id}.idString())
	}
	clear(g.pending)
	for id, exp := range g.released {
		if exp <= now {
			delete(g.released, id)
			g.nReleased.Add(-1)
		}
	}
	g.mu.Unlock()
	challenged := g.pow.challenged.Swap(0)
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	a, err := g.store.Touch(ctx, g.id, g.batch(ids, challenged))
	if err != nil {
		g.pow.challenged.Add(challenged) // reported with the next batch
		g.log.Warn("renewal batch lost; holders renew in the last fifth of their session", "error", err, "visitors", len(ids))
		return
	}
	g.learn(a)
}
