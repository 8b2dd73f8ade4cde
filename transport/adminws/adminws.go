// Package adminws is the handshake shared by the admin WebSockets (the
// live dashboard of a room and the live feed of a load test): the
// subprotocol, where the token is taken from, the close codes of a
// refused socket and how a refusal is sent.
//
// A client opens an admin socket with the subprotocol "aditus-queue.v1"
// and either offers its token beside it as "bearer.<token>" or sends
// {"type":"auth","token":…} as its first message within AuthTimeout (3 s). The
// query string is never read.
//
// What a token may reach is not decided here: each socket keeps its own
// rules (a room's key reaches its own dashboard; no key reaches a load
// test). The package is a leaf beside transport/returnurl and
// transport/web: it imports only gorilla/websocket, so transport/api and
// dashboard/live share it without importing each other.
package adminws

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Subprotocol is the WebSocket subprotocol of the admin sockets.
const Subprotocol = "aditus-queue.v1"

// bearerPrefix marks a token offered as a subprotocol.
const bearerPrefix = "bearer."

// Close codes of a refused admin socket.
const (
	CloseUnauthorized = 4401 // bad or missing token
	CloseForbidden    = 4403 // a token that may not reach this socket
	CloseNotFound     = 4404 // unknown room or run
	// CloseTooManyFailures: the client's address failed to sign in too
	// often; the reason says when to try again.
	CloseTooManyFailures = 4429
)

// AuthTimeout is how long a socket without a token in its subprotocols
// has to send its auth message: a console sends it as soon as the socket
// opens, and a socket waiting for it holds one of the node's few places
// for sockets signing in (adminauth.MaxPendingSockets).
const AuthTimeout = 3 * time.Second

// ReadLimit is the largest message, in bytes, an admin socket reads.
const ReadLimit = 4096

// Refusal is why a socket is closed: a close code and a short sentence.
type Refusal struct {
	Code   int
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// Refusals of ReadAuth.
var (
	ErrNoToken    = &Refusal{CloseUnauthorized, "missing token"}
	ErrAuthFormat = &Refusal{CloseUnauthorized, "expected an auth message"}
)

// Offers reports whether the client of r offered Subprotocol.
func Offers(r *http.Request) bool {
	for _, p := range websocket.Subprotocols(r) {
		if p == Subprotocol {
			return true
		}
	}
	return false
}

// OfferedToken is the token the client of r offered as a subprotocol
// ("bearer.<token>", the first if several), "" if none.
func OfferedToken(r *http.Request) string {
	for _, p := range websocket.Subprotocols(r) {
		if t, ok := strings.CutPrefix(p, bearerPrefix); ok {
			return t
		}
	}
	return ""
}

// ReadAuth reads the first message of c, which must be an auth message,
// waiting at most AuthTimeout, and returns its token. It sets c's read
// limit to ReadLimit. No message in time is ErrNoToken; any other message
// is ErrAuthFormat. An empty token is returned as is: the caller's
// authorization refuses it.
func ReadAuth(c *websocket.Conn) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(AuthTimeout))
	defer c.SetReadDeadline(time.Time{})
	c.SetReadLimit(ReadLimit)
	_, b, err := c.ReadMessage()
	if err != nil {
		return "", ErrNoToken
	}
	var m struct {
		Type  string `json:"type"`
		Token string `json:"token"`
	}
	if json.Unmarshal(b, &m) != nil || m.Type != "auth" {
		return "", ErrAuthFormat
	}
	return m.Token, nil
}

// Token is the token of an admin socket's client, in either form of the
// handshake: offered as a subprotocol ("bearer.<token>"), or, without one,
// sent as the first message (ReadAuth), whether or not the client offered
// Subprotocol. Every admin socket takes both forms alike.
//
// It clears the deadlines the HTTP server left on the hijacked
// connection (its read and write timeouts), so that a socket lives as long
// as its own deadlines say.
func Token(r *http.Request, c *websocket.Conn) (string, error) {
	_ = c.NetConn().SetDeadline(time.Time{})
	c.SetReadLimit(ReadLimit)
	if t := OfferedToken(r); t != "" {
		return t, nil
	}
	return ReadAuth(c)
}

// WriteClose sends a close frame with code and reason, waiting at most a
// second. It does not close the connection.
func WriteClose(c *websocket.Conn, code int, reason string) {
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}
