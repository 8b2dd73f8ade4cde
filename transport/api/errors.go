package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Error is an answer with a machine code, a human message and its status.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"error"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Extra fields merged into the body (e.g. a fresh PoW challenge).
	Extra map[string]any `json:"-"`
	// RetryAfter, when set, is the Retry-After of the answer in seconds
	// (a 503 has 2 otherwise).
	RetryAfter int `json:"-"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// statusOf maps grain error codes to HTTP statuses, in one place.
var statusOf = map[string]int{
	protocol.CodeNotFound:           http.StatusNotFound,
	protocol.CodeConflict:           http.StatusConflict,
	protocol.CodeInvalid:            http.StatusUnprocessableEntity,
	protocol.CodePaused:             http.StatusLocked,
	protocol.CodeTooEarly:           http.StatusTooEarly,
	protocol.CodeNotIssued:          http.StatusNotFound,
	protocol.CodeUnavailable:        http.StatusServiceUnavailable,
	protocol.CodeLogUnavailable:     http.StatusServiceUnavailable,
	protocol.CodeClusterUnavailable: http.StatusServiceUnavailable,
	protocol.CodeRoomUnavailable:    http.StatusServiceUnavailable,
	protocol.CodeBusy:               http.StatusServiceUnavailable,
	protocol.CodeRateLimited:        http.StatusTooManyRequests,
	protocol.CodeUnauthorized:       http.StatusUnauthorized,
	protocol.CodeForbidden:          http.StatusForbidden,
	protocol.CodeNoCode:             http.StatusNotFound,
	protocol.CodeSoldOut:            http.StatusGone,
	protocol.CodeMaintenance:        http.StatusServiceUnavailable,
}

// handleError is Echo's error handler: every error becomes the contract's
// JSON {error, message}; only internal errors are logged.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e := s.toError(err, c)
	switch {
	case e.RetryAfter > 0:
		c.Response().Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	case e.Status == http.StatusServiceUnavailable:
		c.Response().Header().Set("Retry-After", "2")
	}
	body := map[string]any{"error": e.Code, "message": e.Message}
	if e.Field != "" {
		body["field"] = e.Field
	}
	for k, v := range e.Extra {
		body[k] = v
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(e.Status)
		return
	}
	_ = c.JSON(e.Status, body)
}

func (s *Server) toError(err error, c echo.Context) *Error {
	var ae *Error
	var ne *protocol.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ne):
		st, ok := statusOf[ne.Code]
		if !ok {
			s.log.Error("internal grain error", "path", c.Path(), "error", err)
			return errorf(http.StatusInternalServerError, "internal", "Something went wrong on our side.")
		}
		msg := ne.Message
		if ne.Code == protocol.CodeNotIssued {
			return &Error{Status: st, Code: "not_found", Message: msg}
		}
		if ne.Code == protocol.CodeMaintenance {
			return &Error{Status: st, Code: ne.Code, Message: msg, RetryAfter: room.MaintenanceRetrySeconds}
		}
		if ne.Code == protocol.CodeNoCode {
			return &Error{Status: st, Code: "not_found", Message: "Not found."}
		}
		return &Error{Status: st, Code: ne.Code, Message: msg, Field: ne.Field}
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusRequestEntityTooLarge:
			return errorf(he.Code, "too_large", "The request body is larger than 64 KiB.")
		case http.StatusNotFound:
			return errorf(he.Code, "not_found", "Not found.")
		case http.StatusMethodNotAllowed:
			return errorf(he.Code, "method_not_allowed", "Method not allowed.")
		case http.StatusUnauthorized:
			return errorf(he.Code, "unauthorized", "Missing or invalid credentials.")
		}
		if he.Code >= 500 {
			s.log.Error("internal error", "path", c.Path(), "error", err)
			return errorf(http.StatusInternalServerError, "internal", "Something went wrong on our side.")
		}
		return errorf(he.Code, "bad_request", http.StatusText(he.Code))
	}
	s.log.Error("internal error", "path", c.Path(), "error", err)
	return errorf(http.StatusInternalServerError, "internal", "Something went wrong on our side.")
}

var (
	errNoRoom      = errorf(http.StatusNotFound, "not_found", "No such waiting room.")
	errBadJSON     = errorf(http.StatusBadRequest, "bad_request", "The request body is not valid JSON.")
	errBadTicket   = errorf(http.StatusUnauthorized, "bad_ticket", "The ticket is missing or not valid for this waiting room.")
	errNotIssued   = errorf(http.StatusNotFound, "not_found", "This number was never issued.")
	errPaused      = errorf(http.StatusLocked, "paused", "The waiting room is paused. Admission resumes when the organiser continues the sale.")
	errNeedTicket  = errorf(http.StatusBadRequest, "bad_request", "Give the ticket from the join answer (or a number where the room allows it).")
	errForbidden   = errorf(http.StatusForbidden, "forbidden", "This API key may not do that.")
	errUnauthorize = errorf(http.StatusUnauthorized, "unauthorized", "Missing or invalid credentials.")
)
