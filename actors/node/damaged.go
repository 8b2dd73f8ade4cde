package node

import (
	"errors"

	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// ErrRoomDamaged is answered for a room whose stored history the log
// cannot rebuild (persistence.ErrDamaged: its snapshots are damaged and
// the records they covered are gone, or its offsets jump). The room is not
// served, never rebuilt from what is left, until it is restored from a
// backup; the node's log names the damage, and every other room serves.
var ErrRoomDamaged = &Error{Code: CodeRoomUnavailable,
	Message: "This waiting room's stored history is damaged on this server; it is not served until it is restored from a backup."}

// notActivated is a grain's answer while its activation fails with err:
// ErrRoomDamaged for damage, which no retry mends, ErrUnavailable otherwise.
func notActivated(err error) *wire.Response {
	if errors.Is(err, persistence.ErrDamaged) {
		return errResponse(ErrRoomDamaged)
	}
	return errResponse(persistence.ErrUnavailable)
}

// isDamaged reports whether err is a grain's ErrRoomDamaged answer.
func isDamaged(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeRoomUnavailable && e.Message == ErrRoomDamaged.Message
}

// DamagedStreams counts the streams of the node's log found damaged (their
// rooms answer ErrRoomDamaged); 0 for a log that does not tell.
func (n *Node) DamagedStreams() int {
	if d, ok := n.cfg.Deps.Log.(interface{ Damaged() map[string]string }); ok {
		return len(d.Damaged())
	}
	return 0
}
