package grain

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// dirEvent is an event of the directory stream.
type dirEvent struct {
	V     int    `json:"v"`
	Type  string `json:"type"` // claimed | released | activated
	Epoch int64  `json:"epoch,omitempty"`
	At    int64  `json:"at"`
	Slug  string `json:"slug,omitempty"`
	ID    string `json:"id,omitempty"`
}

// dirState maps slugs to room ids; it owns slug uniqueness.
type dirState struct {
	Epoch int64             `json:"epoch"`
	Slugs map[string]string `json:"slugs"`
}

func (s *dirState) apply(offset int64, data []byte) {
	var e dirEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return
	}
	switch {
	case e.Type == "activated":
		s.Epoch = offset
	case e.Epoch != s.Epoch:
		// written by a superseded activation
	case e.Type == "claimed":
		s.Slugs[e.Slug] = e.ID
	case e.Type == "released":
		if s.Slugs[e.Slug] == e.ID {
			delete(s.Slugs, e.Slug)
		}
	}
}

// directoryGrain is the single grain that maps slugs to rooms. Its writes
// are rare (room creation and deletion), so it writes synchronously.
type directoryGrain struct {
	deps  *Deps
	log   *slog.Logger
	st    *dirState
	j     journal
	ready bool
	dead  bool
}

func newDirectoryGrain(d *Deps) actor.Actor { return &directoryGrain{deps: d} }

func (g *directoryGrain) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *cluster.ClusterInit:
		g.log = g.deps.Logger.With("grain", "directory")
		g.activate()
	case *wire.Request:
		g.handle(ctx, m)
	}
}

func (g *directoryGrain) activate() {
	st := &dirState{Slugs: map[string]string{}}
	g.j = journal{log: g.deps.Log, stream: protocol.DirectoryID, timeout: 4 * g.deps.WriteTimeout}
	err := g.j.recover(context.Background(), func(b []byte) error { return json.Unmarshal(b, st) },
		func(off int64, data []byte) error { st.apply(off, data); return nil })
	if err != nil {
		g.log.Warn("directory activation failed", "error", err)
		return
	}
	if st.Slugs == nil {
		st.Slugs = map[string]string{}
	}
	g.st, g.ready = st, true
	g.snapshot() // covers the tail just read and this activation's marker
}

func (g *directoryGrain) handle(ctx actor.Context, req *wire.Request) {
	if !serving(ctx, g.dead, &g.ready, g.activate) {
		return
	}
	var e protocol.DirectoryEntry
	if !decode(ctx, req, &e) {
		return
	}
	switch req.Op {
	case protocol.OpResolve:
		id, ok := g.st.Slugs[e.Slug]
		if !ok {
			ctx.Respond(errResponse(room.ErrNotFound))
			return
		}
		ctx.Respond(okResponse(protocol.DirectoryEntry{Slug: e.Slug, ID: id}))
	case protocol.OpList:
		out := make([]protocol.DirectoryEntry, 0, len(g.st.Slugs))
		for s, id := range g.st.Slugs {
			out = append(out, protocol.DirectoryEntry{Slug: s, ID: id})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
		ctx.Respond(okResponse(out))
	case protocol.OpClaim:
		if err := room.ValidateSlug(e.Slug); err != nil {
			ctx.Respond(errResponse(err))
			return
		}
		if id, ok := g.st.Slugs[e.Slug]; ok {
			if id == e.ID { // a retried claim
				ctx.Respond(okResponse(e))
				return
			}
			ctx.Respond(&wire.Response{Code: protocol.CodeConflict, Message: "slug is taken"})
			return
		}
		ctx.Respond(g.write(dirEvent{Type: "claimed", Slug: e.Slug, ID: e.ID}, e))
	case protocol.OpRelease:
		if g.st.Slugs[e.Slug] != e.ID {
			ctx.Respond(okResponse(e))
			return
		}
		ctx.Respond(g.write(dirEvent{Type: "released", Slug: e.Slug, ID: e.ID}, e))
	default:
		ctx.Respond(&wire.Response{Code: protocol.CodeInvalid, Message: "unknown operation " + req.Op})
	}
}

func (g *directoryGrain) write(e dirEvent, result any) *wire.Response {
	e.V, e.Epoch, e.At = 1, g.j.epoch, g.deps.Now().UnixNano()
	b, err := json.Marshal(e)
	if err != nil {
		return errResponse(err)
	}
	err = g.j.commit([][]byte{b}, func(off int64, data []byte) { g.st.apply(off, data) })
	if errors.Is(err, protocol.ErrSuperseded) {
		g.dead = true
	}
	if err != nil {
		return errResponse(err)
	}
	// Writes are rare (a room created or deleted) and Kafka's retention
	// drops by age alone: every write is covered by a snapshot at once.
	g.snapshot()
	return okResponse(result)
}

func (g *directoryGrain) snapshot() {
	_ = g.j.saveSnapshot(g.st, 0)
}
