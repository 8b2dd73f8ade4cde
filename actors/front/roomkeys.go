package front

import (
	"errors"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/token"
)

// errKeyTooShort is the reason given for an opened key below the minimum.
var errKeyTooShort = errors.New("opened key is shorter than the minimum")

// Opener opens secrets sealed under the node master key (the grains seal
// them).
type Opener interface {
	Open(sealed, associatedData []byte) ([]byte, error)
}

// openKeys opens rv's token secret and ticket key with sealer. Either both
// open and are long enough, or neither is returned and err says why.
func openKeys(sealer Opener, rv *room.View) (secret, ticketKey []byte, err error) {
	if sealer == nil {
		return nil, nil, errors.New("no sealer on this node")
	}
	if secret, err = sealer.Open(rv.SecretSealed, []byte("room:"+rv.ID+":secret")); err != nil {
		return nil, nil, err
	}
	if ticketKey, err = sealer.Open(rv.TicketKeySealed, []byte("room:"+rv.ID+":ticket")); err != nil {
		return nil, nil, err
	}
	if len(secret) < token.MinSecretLen || room.CheckKey(ticketKey) != nil {
		return nil, nil, errKeyTooShort
	}
	return secret, ticketKey, nil
}

// UnavailableRoom is a room this node holds a view of but cannot serve.
type UnavailableRoom struct {
	ID, Slug, Reason string
}

// lockedRooms are the rooms whose keys this node could not open, with the
// reason; the gauge (nil: none) follows their count. Guarded by Views.mu.
type lockedRooms struct {
	rooms map[string]UnavailableRoom
	gauge prometheus.Gauge
}

func (l *lockedRooms) set(rv *room.View, reason string) {
	if l.rooms == nil {
		l.rooms = map[string]UnavailableRoom{}
	}
	if reason == "" || !rv.Exists || rv.Deleted {
		delete(l.rooms, rv.ID)
	} else {
		l.rooms[rv.ID] = UnavailableRoom{ID: rv.ID, Slug: rv.Config.Slug, Reason: reason}
	}
	l.update()
}

func (l *lockedRooms) forget(id string) {
	delete(l.rooms, id)
	l.update()
}

func (l *lockedRooms) update() {
	if l.gauge != nil {
		l.gauge.Set(float64(len(l.rooms)))
	}
}

func (l *lockedRooms) list() []UnavailableRoom {
	out := make([]UnavailableRoom, 0, len(l.rooms))
	for _, r := range l.rooms {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Unavailable lists the rooms this node holds but cannot serve because
// their keys do not open here, ordered by id.
func (v *Views) Unavailable() []UnavailableRoom {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.locked.list()
}
