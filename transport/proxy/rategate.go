package proxy

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	frontside "github.com/aditus-queue/aditus-queue/actors/front"
	edge "github.com/aditus-queue/aditus-queue/transport/gate"
)

// RateRooms finds the rate rooms (seed 000) a `waiting_room { room = … }`
// names: their token secret, from the front node's cache of room views.
type RateRooms interface {
	// Secret returns room slug's token signing secret; ok is false for an
	// unknown room, err set when the store could not be asked.
	Secret(ctx context.Context, slug string) (secret []byte, ok bool, err error)
}

// ClusterRateRooms is the RateRooms of a node: its view cache, kept
// current by the rooms' pushes (a secret rotation reaches the proxy within
// a push).
type ClusterRateRooms struct{ Views *frontside.Views }

// Secret implements RateRooms.
func (c ClusterRateRooms) Secret(ctx context.Context, slug string) ([]byte, bool, error) {
	r, ok, err := c.Views.BySlug(ctx, slug)
	if err != nil || !ok {
		return nil, false, err
	}
	return r.Secret, true, nil
}

// rateGate enforces a rate room's admission tokens as the edge gates do
// (transport/gate): a valid token passes, anyone else is sent to the
// room's gateway link at the queue's public URL.
type rateGate struct {
	room  *Room
	rooms RateRooms
	url   string // the room's page, <public URL>/queue/<slug>
	log   *slog.Logger
	// trusted are the proxy's trusted_proxies: the gate believes their
	// X-Forwarded-Proto and -Host for the return URL, and nobody else's.
	trusted []netip.Prefix
	// mu guards g and secret: the gate of the room's current secret.
	mu     sync.Mutex
	g      *edge.Gate
	secret []byte
}

func newRateGate(r *Room, rooms RateRooms, publicURL string, trusted []netip.Prefix, log *slog.Logger) (*rateGate, error) {
	if rooms == nil || publicURL == "" {
		return nil, errors.New("waiting_room room = \"" + r.RateRoom + "\": rate rooms need the queue's cluster and its public URL (--public-url)")
	}
	return &rateGate{room: r, rooms: rooms, url: strings.TrimRight(publicURL, "/") + "/queue/" + r.RateRoom,
		log: log.With("rate_room", r.RateRoom), trusted: trusted}, nil
}

// current returns the gate of the room's current secret.
func (rg *rateGate) current(ctx context.Context) (*edge.Gate, bool, error) {
	secret, ok, err := rg.rooms.Secret(ctx, rg.room.RateRoom)
	if err != nil || !ok {
		return nil, ok, err
	}
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if rg.g == nil || !bytes.Equal(secret, rg.secret) {
		g, err := edge.New(rg.room.RateRoom, secret, rg.url, edge.WithTrustedProxies(rg.trusted))
		if err != nil {
			return nil, false, err
		}
		rg.g, rg.secret = g, secret
	}
	return rg.g, true, nil
}

// admit lets r on when it carries a valid token of the room (after the
// gate turned a returning visitor's token into a cookie); otherwise it has
// answered: a redirect to the room, or, with the store unreachable, as
// on_store_error says.
func (rg *rateGate) admit(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	g, ok, err := rg.current(ctx)
	cancel()
	switch {
	case err != nil:
		rg.log.Warn("rate room unreachable", "error", err)
		if rg.room.AdmitOnStoreError {
			return r, true
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Retry-After", "10")
		http.Error(w, "The waiting room cannot be reached; try again in a moment.", http.StatusServiceUnavailable)
		return nil, false
	case !ok:
		rg.log.Error("rate room does not exist", "room", rg.room.RateRoom)
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "This site's waiting room is not set up.", http.StatusServiceUnavailable)
		return nil, false
	}
	var out *http.Request
	g.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r2 *http.Request) { out = r2 })).ServeHTTP(w, r)
	return out, out != nil
}
