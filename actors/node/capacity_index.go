package node

import (
	"context"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// KindCapacityIndex is the grain kind of the list of capacity rooms: a
// singleton (identity CapacityIndexID) that every proxy node tells, every
// few seconds, the capacity rooms its file has. The console lists capacity
// rooms from it.
//
// Soft state, as the instances registry: the rooms' own state is in their
// logs, and a member that takes the index over after a fail-over knows
// every served room again one announcement later. A room no proxy has
// announced for CapacityIndexTTL drops out of the list (its log stays).
const (
	KindCapacityIndex = "capacity-index"
	CapacityIndexID   = "capacity-rooms"
	opCapAnnounce     = "cap-announce"
	opCapList         = "cap-list"
	// CapacityIndexTTL is how long a room stays listed unannounced.
	CapacityIndexTTL = 24 * time.Hour
	// MaxCapacityRooms bounds the list; a room past it is refused (and
	// counted) until another drops out.
	MaxCapacityRooms = 1024
	// AnnounceInterval is how often a proxy node announces its rooms.
	AnnounceInterval = 3 * time.Second
)

// CapacityRoom is one entry of the list.
type CapacityRoom struct {
	ID   string `json:"id"`
	Host string `json:"host"`
	Name string `json:"name"`
	// Seen is when a proxy node last announced it.
	Seen time.Time `json:"seen"`
}

// CapacityList is the list and how many announcements it refused.
type CapacityList struct {
	Rooms   []CapacityRoom `json:"rooms"`
	Refused uint64         `json:"refused"`
}

type capacityIndex struct {
	deps    *Deps
	rooms   map[string]CapacityRoom
	refused uint64
}

func newCapacityIndex(d *Deps) actor.Actor {
	return &capacityIndex{deps: d, rooms: map[string]CapacityRoom{}}
}

// Receive answers announcements and reads; all state lives here.
func (g *capacityIndex) Receive(ctx actor.Context) {
	req, ok := ctx.Message().(*wire.Request)
	if !ok {
		return
	}
	now := g.deps.Now()
	for id, r := range g.rooms {
		if now.Sub(r.Seen) > CapacityIndexTTL {
			delete(g.rooms, id)
		}
	}
	switch req.Op {
	case opCapAnnounce:
		var rs []CapacityRoom
		if !decode(ctx, req, &rs) {
			return
		}
		for _, r := range rs {
			g.announce(r, now)
		}
		ctx.Respond(okResponse(struct{}{}))
	case opCapList:
		ctx.Respond(okResponse(g.list()))
	default:
		ctx.Respond(&wire.Response{Code: CodeInvalid, Message: "unknown operation " + req.Op})
	}
}

func (g *capacityIndex) announce(r CapacityRoom, now time.Time) {
	if r.ID != CapacityID(r.Host, r.Name) || len(r.Host) > 253 || len(r.Name) > 1024 {
		g.refused++
		return
	}
	if _, ok := g.rooms[r.ID]; !ok && len(g.rooms) >= MaxCapacityRooms {
		g.refused++
		return
	}
	r.Seen = now.UTC()
	g.rooms[r.ID] = r
}

func (g *capacityIndex) list() CapacityList {
	l := CapacityList{Rooms: make([]CapacityRoom, 0, len(g.rooms)), Refused: g.refused}
	for _, r := range g.rooms {
		l.Rooms = append(l.Rooms, r)
	}
	sort.Slice(l.Rooms, func(i, j int) bool {
		a, b := l.Rooms[i], l.Rooms[j]
		return a.Host < b.Host || a.Host == b.Host && a.Name < b.Name
	})
	return l
}

// CapacityAnnounce tells the index the capacity rooms a proxy node serves.
func (c *Client) CapacityAnnounce(ctx context.Context, rooms []CapacityRoom) error {
	return c.call(ctx, CapacityIndexID, KindCapacityIndex, opCapAnnounce, rooms, nil)
}

// CapacityRooms lists the capacity rooms announced within CapacityIndexTTL.
func (c *Client) CapacityRooms(ctx context.Context) (CapacityList, error) {
	var l CapacityList
	err := c.call(ctx, CapacityIndexID, KindCapacityIndex, opCapList, struct{}{}, &l)
	return l, err
}
