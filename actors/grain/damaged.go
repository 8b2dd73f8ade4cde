package grain

import (
	"errors"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
)

// notActivated is a grain's answer while its activation fails with err:
// ErrRoomDamaged for damage, which no retry mends, ErrUnavailable otherwise.
func notActivated(err error) *wire.Response {
	if errors.Is(err, persistence.ErrDamaged) {
		return errResponse(protocol.ErrRoomDamaged)
	}
	return errResponse(persistence.ErrUnavailable)
}
