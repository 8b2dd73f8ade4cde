package proxy

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// ask is the store's answer for visitor v: a first request (no cookie)
// arrives with a provisional place; a cookie saying when its visitor first
// came confirms that place (or is an ordinary check once it is real); a
// cookie sealed before arrival times were kept is an ordinary check.
func (g *gate) ask(ctx context.Context, v Visitor, known bool) (capacity.Status, error) {
	id := v.idString()
	switch {
	case !known:
		return g.store.Arrive(ctx, g.id, g.room.Settings, id)
	case v.Arrived > 0:
		return g.store.Confirm(ctx, g.id, g.room.Settings, id, v.Arrived)
	}
	return g.store.Check(ctx, g.id, g.room.Settings, id)
}

// waitProvisional answers the waiting page to a first request: its place
// counts once the cookie comes back, so the page says "about N ahead",
// everyone who waits now.
func (g *gate) waitProvisional(w http.ResponseWriter, st capacity.Status) {
	g.waitPage(w, "about "+strconv.Itoa(st.Position-1)+" ahead", st.Waiting, int(g.room.Settings.Refresh/time.Second))
}

// refuse answers a first request over its address's budget: the waiting
// page with no place and no cookie, 503, and Retry-After when the address
// has a token again.
func (g *gate) refuse(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", ratelimit.RetryAfter(wait))
	g.waitPage(w, "…", 0, int(g.room.Settings.Refresh/time.Second))
}

// waitPage writes the waiting page, 503 and never cached, with the
// Retry-After already set or the refresh interval.
func (g *gate) waitPage(w http.ResponseWriter, position string, waiting, refresh int) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if h.Get("Retry-After") == "" {
		h.Set("Retry-After", strconv.Itoa(refresh))
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(g.page.fill(position, waiting, refresh))
}
