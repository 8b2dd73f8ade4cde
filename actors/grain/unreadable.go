package grain

import (
	"encoding/json"
	"errors"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/release"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/versioned"
)

// A member that finds in a room's log an event it cannot read (a newer
// encoding, or a feature it does not know: versioned.NewerError) refuses
// the room, answering 503 room_unavailable with what it needs, instead of
// skipping the event and serving the room as if it had not happened (a
// sold-out room taken for open). It stays refused on this member: only a
// newer binary reads it.

// asNewer returns err as a NewerError, or nil.
func asNewer(err error) *versioned.NewerError {
	var ne *versioned.NewerError
	if errors.As(err, &ne) {
		return ne
	}
	return nil
}

// refuseNewer reports whether err, an activation's failure, is a record
// this release cannot read, and then refuses the room for good.
func (g *roomGrain) refuseNewer(err error) bool {
	ne := asNewer(err)
	if ne == nil {
		return false
	}
	g.unreadable = unreadableError(ne)
	g.log.Error("room refused: its log holds an event this release cannot read", "release", release.Version, "error", ne)
	return true
}

// unreadableError is the answer of a refused room.
func unreadableError(ne *versioned.NewerError) *protocol.Error {
	need := "a newer release of aditus-queue"
	if ne.Feature != "" {
		need = "aditus-queue " + ne.Since + " or newer (feature " + ne.Feature + ")"
	}
	return &protocol.Error{Code: protocol.CodeRoomUnavailable, Message: "This server (aditus-queue " + release.Version +
		") cannot read this waiting room's log: it needs " + need + ". The room is served by upgraded servers."}
}

// roomSnapshot is a room's snapshot: its state, and the features the state
// needs (a snapshot stands for the events it covers, which named them).
// A release that does not know one refuses the room as for an event.
type roomSnapshot struct {
	*room.State
	Needs map[string]string `json:"needs,omitempty"`
}

func encodeSnapshot(st *room.State) ([]byte, error) {
	return json.Marshal(roomSnapshot{State: st, Needs: room.ViewNeeds(&st.View)})
}

func decodeSnapshot(b []byte, st *room.State) error {
	s := roomSnapshot{State: st}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return room.CheckNeeds(s.Needs, "snapshot")
}
