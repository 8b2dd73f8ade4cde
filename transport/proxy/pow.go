package proxy

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/spent"
	"github.com/aditus-queue/aditus-queue/transport/web"
)

// Proof of work for new arrivals of a capacity room (pow_auto). The room's
// grain decides when new arrivals must prove work and how hard
// (capacity.PowAuto); every answer of the store carries the bits in force,
// and this node asks accordingly. A first request without a cookie then
// gets a challenge page instead of a place: the page solves the challenge
// in a worker (the waiting page's own solver, web.PowWorker), puts the
// solution in the cookie <room cookie>_pow and loads the page again, which
// now arrives with a place in line. Visitors who already have a cookie are
// never asked. A challenge is stateless and signed for the room with a key
// derived from the room's cookie key, so every proxy node checks another's;
// a solution is spent once (package spent, per node). The challenge pages
// answered are counted and reported with the renewal batches: they are
// arrivals too, so the work stays on while a flood goes on.

//go:embed challenge.html
var challengeHTML []byte

// challengePage is the challenge page with the solver in it.
var challengePage = parseHoles(bytes.Replace(challengeHTML, []byte("{worker}"), web.PowWorker(), 1),
	"{challenge}", "{bits}", "{cookie}", "{secure}")

// challengePageSize is the challenge page's length with room for the
// challenge, the bits and the cookie's name.
var challengePageSize = func() (n int) {
	for _, p := range challengePage.parts {
		n += len(p)
	}
	return n + 128
}()

// maxSpent bounds the spent challenges one room remembers on a proxy
// node: enough for 870 solved arrivals a second sustained for the five
// minutes a challenge lives (256 Ki entries, about 13 MB when full).
var maxSpent = spent.Limit(870, room.ChallengeTTL)

// gatePow is a gate's proof of work: the bits in force as the store last
// said, and the challenge pages answered.
type gatePow struct {
	bits atomic.Int32
	// challenged counts the challenge pages since the last batch;
	// challenges all of them, for the metric.
	challenged, challenges atomic.Uint64
	spent                  *spent.Set
}

// powCookie is the cookie that carries a solution back.
func (g *gate) powCookie() string { return g.cookieName + "_pow" }

// setPow records the bits in force the store answered.
func (g *gate) setPow(bits int) {
	if old := g.pow.bits.Swap(int32(bits)); int(old) != bits {
		g.log.Info("proof of work for new arrivals", "bits", bits, "before", old)
	}
}

// proved reports whether first request r carries the solution of a fresh
// challenge of this room, at least bits hard and not spent; when it does
// not, proved has answered a challenge page.
func (g *gate) proved(w http.ResponseWriter, r *http.Request, box *cookieBox, bits int) bool {
	now := g.now()
	if c, err := r.Cookie(g.powCookie()); err == nil {
		http.SetCookie(w, &http.Cookie{Name: g.powCookie(), Path: "/", MaxAge: -1, Secure: g.secure(r), SameSite: http.SameSiteLaxMode})
		if g.solved(box, c.Value, bits, now) {
			return true
		}
	}
	g.challenge(w, r, box, bits, now)
	return false
}

// solved checks a solution "challenge.nonce".
func (g *gate) solved(box *cookieBox, s string, bits int, now time.Time) bool {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return false
	}
	c, err := room.CheckSolution(box.powKey, g.id, s[:i], s[i+1:], bits, now)
	return err == nil && g.pow.spent.Spend(binary.BigEndian.Uint64(c.ID[:8]), uint32(c.Expires.Unix()), uint32(now.Unix()))
}

// challenge answers the challenge page: 503, never cached, a fresh
// challenge of bits.
func (g *gate) challenge(w http.ResponseWriter, r *http.Request, box *cookieBox, bits int, now time.Time) {
	s, err := room.NewChallenge(box.powKey, g.id, bits, now)
	if err != nil { // a cookie box always has a long enough key
		g.log.Error("challenge not signed", "error", err)
		g.wait(w, 0, 0)
		return
	}
	g.pow.challenged.Add(1)
	g.pow.challenges.Add(1)
	secure := "0"
	if g.secure(r) {
		secure = "1"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Retry-After", strconv.Itoa(int(g.room.Settings.Refresh/time.Second)))
	w.WriteHeader(http.StatusServiceUnavailable)
	var b bytes.Buffer
	b.Grow(challengePageSize)
	challengePage.write(&b, func(b *bytes.Buffer, name string) {
		switch name {
		case "{challenge}":
			b.WriteString(s)
		case "{bits}":
			b.WriteString(strconv.Itoa(bits))
		case "{cookie}":
			b.WriteString(g.powCookie())
		case "{secure}":
			b.WriteString(secure)
		}
	})
	_, _ = w.Write(b.Bytes())
}
