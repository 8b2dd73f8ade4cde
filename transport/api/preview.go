package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// handleSitePreview answers what a visitor would meet at the instant
// ?at= (RFC 3339; now when absent): the settings in force under the
// room's events, the event that shapes them and the next change. It reads
// the site as stored and computes with the same pure rules the room runs
// on, so the preview cannot drift from what the room does.
func (s *Server) handleSitePreview(c echo.Context) error {
	at := s.now()
	if q := c.QueryParam("at"); q != "" {
		t, err := time.Parse(time.RFC3339, q)
		if err != nil || t.Year() < 2000 || t.Year() > 2999 {
			return &Error{Status: http.StatusUnprocessableEntity, Code: protocol.CodeInvalid, Field: "at",
				Message: "at must be an RFC 3339 time, e.g. 2026-12-01T10:00:00Z"}
		}
		at = t
	}
	v, err := s.pathSite(c)
	if err != nil {
		return err
	}
	cfg := v.Settings()
	return c.JSON(http.StatusOK, room.Preview(&cfg, at))
}
