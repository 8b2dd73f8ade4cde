package api

import (
	"net/http"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// closedError is the answer to a join, status or token request while the
// room's mode refuses them: 410 sold_out, or 503 maintenance with
// Retry-After. The body carries the mode and the operator's message, so an
// app can show it. It is nil when the mode lets visitors through.
func closedError(v *room.View) *Error {
	switch v.Closed() {
	case room.ErrSoldOut:
		return &Error{Status: http.StatusGone, Code: "sold_out", Message: "The sale is over.",
			Extra: map[string]any{"mode": room.ModeSoldOut, "modeMessage": v.Config.SoldOutMessage}}
	case room.ErrMaintenance:
		return &Error{Status: http.StatusServiceUnavailable, Code: "maintenance",
			Message: "The shop is down for maintenance; try again later.", RetryAfter: room.MaintenanceRetrySeconds,
			Extra: map[string]any{"mode": room.ModeMaintenance, "modeMessage": v.Config.MaintenanceMessage}}
	}
	return nil
}

// modeField is the mode as join and status answers carry it: left out in
// queue mode, so the common answer stays as it was.
func modeField(v *room.View) string {
	if m := v.EffectiveMode(); m != room.ModeQueue {
		return m
	}
	return ""
}

// closedModeMessage is the operator's message of a closed room's mode.
func closedModeMessage(v *room.View) (room.ModeMessage, bool) {
	switch v.Closed() {
	case room.ErrSoldOut:
		return v.Config.SoldOutMessage, true
	case room.ErrMaintenance:
		return v.Config.MaintenanceMessage, true
	}
	return room.ModeMessage{}, false
}
