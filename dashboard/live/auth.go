package live

import (
	"context"
	"crypto/subtle"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// Refusals of a dashboard socket beyond those of adminws.ReadAuth.
var (
	errBadToken  = &adminws.Refusal{Code: adminws.CloseUnauthorized, Reason: "invalid token"}
	errOtherRoom = &adminws.Refusal{Code: adminws.CloseForbidden, Reason: "this key belongs to another room"}
	errNoRoom    = &adminws.Refusal{Code: adminws.CloseNotFound, Reason: "unknown room"}
	errBusy      = &adminws.Refusal{Code: websocket.CloseTryAgainLater, Reason: "service busy, try again"}
)

// keyRecheck is how often a socket opened with a qak_ key checks that the
// key still stands: a revoked key's dashboard closes with 4401 within it.
const keyRecheck = 30 * time.Second

// isKey reports whether token is shaped like a qak_ key.
func isKey(token string) bool { return strings.HasPrefix(token, "qak_") }

// authorize checks token for room id: the admin token reaches every room,
// a qak_ key only its own (checked by its room's grain, by hash). Keys
// naming rooms the directory does not know are refused before any grain
// is asked, so random ids never activate grains.
func (h *Hub) authorize(ctx context.Context, token, id string) error {
	if token == "" {
		return adminws.ErrNoToken
	}
	list, err := h.client.List(ctx)
	if err != nil {
		return errBusy
	}
	known := func(id string) bool {
		for _, e := range list {
			if e.ID == id {
				return true
			}
		}
		return false
	}
	if len(h.adminHash) > 0 && subtle.ConstantTimeCompare(h.hash(token), h.adminHash) == 1 {
		if !known(id) {
			return errNoRoom
		}
		return nil
	}
	rest, ok := strings.CutPrefix(token, "qak_")
	if !ok {
		return errBadToken
	}
	keyRoom, _, ok := strings.Cut(rest, "_")
	if !ok || !known(keyRoom) {
		return errBadToken
	}
	err = h.client.Admin(ctx, keyRoom, node.OpAuthKey, node.AdminRequest{KeyHash: h.hash(token)}, nil)
	switch {
	case node.IsCode(err, node.CodeUnauthorized), node.IsCode(err, node.CodeNotFound):
		return errBadToken
	case err != nil:
		return errBusy
	case keyRoom != id:
		return errOtherRoom
	}
	return nil
}
