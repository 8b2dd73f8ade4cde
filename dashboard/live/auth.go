package live

import (
	"context"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// Refusals of a dashboard socket beyond those of adminauth.SocketRefusal.
var (
	errOtherRoom = &adminws.Refusal{Code: adminws.CloseForbidden, Reason: "this key belongs to another room"}
	errNoRoom    = &adminws.Refusal{Code: adminws.CloseNotFound, Reason: "unknown room"}
	errBusy      = &adminws.Refusal{Code: websocket.CloseTryAgainLater, Reason: "service busy, try again"}
)

// keyRecheck is how often a socket opened with a qak_ key checks that the
// key still stands: a revoked key's dashboard closes with 4401 within it.
const keyRecheck = 30 * time.Second

// isKey reports whether token is shaped like a qak_ key.
func isKey(token string) bool { return strings.HasPrefix(token, "qak_") }

// authorize checks that principal p may watch room id: the operator every
// room the directory knows, a key only its own.
func (h *Hub) authorize(ctx context.Context, p adminauth.Principal, id string) error {
	if !p.Operator {
		if p.RoomID != id {
			return errOtherRoom
		}
		return nil
	}
	if protocol.IsCapacityID(id) {
		return h.capacityExists(ctx, id)
	}
	known, err := h.auth.RoomExists(ctx, id)
	switch {
	case err != nil:
		return errBusy
	case !known:
		return errNoRoom
	}
	return nil
}
