package protocol

import (
	"errors"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// ErrClusterUnavailable is answered at once while this node reaches no
// member of the cluster.
var ErrClusterUnavailable = &Error{Code: CodeClusterUnavailable, Message: "No server of the waiting room can be reached right now; try again in a few seconds."}

// Unavailable is the answer to a room lookup that failed with err:
// ErrClusterUnavailable while no member is reachable, ErrRoomUnavailable
// when this node cannot open the room's keys, ErrRoomDamaged when the
// room's grain cannot rebuild its damaged history, ErrUnavailable
// otherwise.
func Unavailable(err error) *Error {
	switch {
	case IsCode(err, CodeClusterUnavailable):
		return ErrClusterUnavailable
	case IsDamaged(err):
		return ErrRoomDamaged
	case IsCode(err, CodeRoomUnavailable):
		return ErrRoomUnavailable
	}
	return ErrUnavailable
}

// ErrJoinsBusy refuses a join while its room's gathered joins are at their
// bound on this front.
var ErrJoinsBusy = &Error{Code: CodeBusy, Message: "Too many visitors are joining this room at this moment; try again in a few seconds."}

// ErrUnavailable is returned when no member answered in time.
var ErrUnavailable = &Error{Code: CodeUnavailable, Message: "The waiting room service is busy or restarting; try again shortly."}

// IsCode reports whether err is a grain error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// ErrTooManyLookups is answered to a client over its budget of lookups of
// room names this node does not know (Views.Lookup).
var ErrTooManyLookups = &Error{Code: CodeRateLimited,
	Message: "Too many requests for waiting rooms that do not exist from your address; retry after the seconds given."}

// ErrRoomUnavailable is returned for a room whose keys this node cannot
// open: its master key differs from the members', or the sealed keys are
// damaged. The node refuses the room rather than serve it with empty keys,
// which would sign and accept anything.
var ErrRoomUnavailable = &Error{Code: CodeRoomUnavailable,
	Message: "This waiting room cannot be served by this server right now; try again shortly."}

// ErrRoomDamaged is answered for a room whose stored history the log
// cannot rebuild (persistence.ErrDamaged: its snapshots are damaged and
// the records they covered are gone, or its offsets jump). The room is not
// served, never rebuilt from what is left, until it is restored from a
// backup; the node's log names the damage, and every other room serves.
var ErrRoomDamaged = &Error{Code: CodeRoomUnavailable,
	Message: "This waiting room's stored history is damaged on this server; it is not served until it is restored from a backup."}

// ErrLogUnavailable is answered at once while the room's log cannot be
// written: visitors get a 503 with Retry-After instead of waiting out the
// call timeout.
var ErrLogUnavailable = &Error{Code: CodeLogUnavailable, Message: "The waiting room cannot record new numbers right now; try again in a few seconds."}

// ErrBusy is answered to a write beyond the bound of the room's write
// queue: a flood of redemptions or changes costs the flooder, not the
// room's memory.
var ErrBusy = &Error{Code: CodeBusy, Message: "The waiting room has too many changes waiting to be written; try again in a moment."}

// IsDamaged reports whether err is a grain's ErrRoomDamaged answer.
func IsDamaged(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeRoomUnavailable && e.Message == ErrRoomDamaged.Message
}

// ErrSuperseded means a newer activation of the same grain has written its
// marker to the log: this activation must stop serving at once.
var ErrSuperseded = errors.New("superseded by a newer activation")

// ErrorOf maps a rule's error to its wire code.
func ErrorOf(err error) *Error {
	var fe *room.FieldError
	var ne *Error
	switch {
	case errors.As(err, &ne):
		return ne
	case errors.As(err, &fe):
		return &Error{Code: CodeInvalid, Message: fe.Error(), Field: fe.Field}
	case errors.Is(err, room.ErrNotFound), errors.Is(err, room.ErrNoItem):
		return &Error{Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, room.ErrExists):
		return &Error{Code: CodeConflict, Message: err.Error()}
	case errors.Is(err, room.ErrStale):
		return &Error{Code: CodeConflict, Message: "The site was changed since it was read: read it again, then save."}
	case errors.Is(err, room.ErrPaused):
		return &Error{Code: CodePaused, Message: "The waiting room is paused."}
	case errors.Is(err, room.ErrSoldOut):
		return &Error{Code: CodeSoldOut, Message: "The sale is over."}
	case errors.Is(err, room.ErrMaintenance):
		return &Error{Code: CodeMaintenance, Message: "The shop is down for maintenance."}
	case errors.Is(err, room.ErrTooEarly):
		return &Error{Code: CodeTooEarly, Message: "This number is not admitted yet."}
	case errors.Is(err, room.ErrNotIssued):
		return &Error{Code: CodeNotIssued, Message: "This number was never issued."}
	case errors.Is(err, room.ErrNoCode):
		return &Error{Code: CodeNoCode, Message: "No such code."}
	case errors.Is(err, persistence.ErrUnavailable), errors.Is(err, ErrSuperseded):
		return &Error{Code: CodeUnavailable, Message: "The event log is unavailable; try again shortly."}
	}
	return &Error{Code: CodeInternal, Message: "internal error"}
}
