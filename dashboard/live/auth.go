package live

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/actors/node"
)

// Subprotocol is the dashboard socket's protocol. A client may offer its
// token beside it as "bearer.<token>".
const Subprotocol = "aditus-queue.v1"

const bearerPrefix = "bearer."

// Close codes of a refused dashboard socket.
const (
	CloseUnauthorized = 4401 // bad or missing token
	CloseForbidden    = 4403 // a key of another room
	CloseNotFound     = 4404 // unknown room
)

// authTimeout is how long a socket without a token in its subprotocols has
// to send {"type":"auth","token":…}.
const authTimeout = 5 * time.Second

// refusal is why a socket is closed: a close code and a short sentence.
type refusal struct {
	code   int
	reason string
}

func (r *refusal) Error() string { return r.reason }

var (
	errNoToken    = &refusal{CloseUnauthorized, "missing token"}
	errBadToken   = &refusal{CloseUnauthorized, "invalid token"}
	errOtherRoom  = &refusal{CloseForbidden, "this key belongs to another room"}
	errNoRoom     = &refusal{CloseNotFound, "unknown room"}
	errBusy       = &refusal{websocket.CloseTryAgainLater, "service busy, try again"}
	errAuthFormat = &refusal{CloseUnauthorized, "expected an auth message"}
)

// offeredToken is the token a client offered as a subprotocol, "" if none.
// The query string is never read.
func offeredToken(r *http.Request) string {
	for _, p := range websocket.Subprotocols(r) {
		if t, ok := strings.CutPrefix(p, bearerPrefix); ok {
			return t
		}
	}
	return ""
}

// readAuth waits up to authTimeout for the first message, an auth message.
func readAuth(c *websocket.Conn) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(authTimeout))
	defer c.SetReadDeadline(time.Time{})
	c.SetReadLimit(4096)
	_, b, err := c.ReadMessage()
	if err != nil {
		return "", errNoToken
	}
	var m struct {
		Type  string `json:"type"`
		Token string `json:"token"`
	}
	if json.Unmarshal(b, &m) != nil || m.Type != "auth" {
		return "", errAuthFormat
	}
	if m.Token == "" {
		return "", errNoToken
	}
	return m.Token, nil
}

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
		return errNoToken
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
