package grain

import (
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// capacityIndex is the list of capacity rooms the proxy nodes announce
// (protocol.KindCapacityIndex): soft state, bounded.
type capacityIndex struct {
	deps    *Deps
	rooms   map[string]protocol.CapacityRoom
	refused uint64
}

func newCapacityIndex(d *Deps) actor.Actor {
	return &capacityIndex{deps: d, rooms: map[string]protocol.CapacityRoom{}}
}

// Receive answers announcements and reads; all state lives here.
func (g *capacityIndex) Receive(ctx actor.Context) {
	req, ok := ctx.Message().(*wire.Request)
	if !ok {
		return
	}
	now := g.deps.Now()
	for id, r := range g.rooms {
		if now.Sub(r.Seen) > protocol.CapacityIndexTTL {
			delete(g.rooms, id)
		}
	}
	switch req.Op {
	case protocol.OpCapAnnounce:
		var rs []protocol.CapacityRoom
		if !decode(ctx, req, &rs) {
			return
		}
		for _, r := range rs {
			g.announce(r, now)
		}
		ctx.Respond(okResponse(struct{}{}))
	case protocol.OpCapList:
		ctx.Respond(okResponse(g.list()))
	default:
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "unknown operation " + req.Op})
	}
}

// announce keeps r, unless its id is not its host and name's or the list
// is full.
func (g *capacityIndex) announce(r protocol.CapacityRoom, now time.Time) {
	if r.ID != protocol.CapacityID(r.Host, r.Name) || len(r.Host) > 253 || len(r.Name) > 1024 {
		g.refused++
		return
	}
	if _, ok := g.rooms[r.ID]; !ok && len(g.rooms) >= protocol.MaxCapacityRooms {
		g.refused++
		return
	}
	r.Seen = now.UTC()
	g.rooms[r.ID] = r
}

func (g *capacityIndex) list() protocol.CapacityList {
	l := protocol.CapacityList{Rooms: make([]protocol.CapacityRoom, 0, len(g.rooms)), Refused: g.refused}
	for _, r := range g.rooms {
		l.Rooms = append(l.Rooms, r)
	}
	sort.Slice(l.Rooms, func(i, j int) bool {
		a, b := l.Rooms[i], l.Rooms[j]
		return a.Host < b.Host || a.Host == b.Host && a.Name < b.Name
	})
	return l
}
