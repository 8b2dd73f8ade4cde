package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The self-regulating rate's admin endpoints: the test call, the rate log,
// and the outbound check of the health URL before it is stored.

// handleHealthTest makes one call of the room's health URL and answers
// what the controller would see; a passing test is recorded in the room's
// log and allows enabling autoRate with that URL.
func (s *Server) handleHealthTest(c echo.Context) error {
	var res protocol.HealthTestResult
	return s.adminCall(c, protocol.OpHealthCheck, nil, http.StatusOK, &res)
}

// handleRateLog answers the adjustments, newest first.
func (s *Server) handleRateLog(c echo.Context) error {
	var l []room.RateChange
	if err := s.adminCall(c, protocol.OpRateLog, nil, 0, &l); err != nil {
		return err
	}
	if l == nil {
		l = []room.RateChange{}
	}
	return c.JSON(http.StatusOK, map[string]any{"adjustments": l})
}

// checkHealthURL refuses (422 on autoRate.healthUrl) a health URL that our
// servers may not call: not public, or written as a numeric trick. current
// is the URL already stored; an unchanged URL is not checked again here
// (the fetcher checks every connection anyway).
func (s *Server) checkHealthURL(ctx context.Context, cfg *room.Config, current string) error {
	u := cfg.AutoRate.HealthURL
	if u == "" || u == current {
		return nil
	}
	if err := s.healthGuard.CheckURL(ctx, u); err != nil {
		return &Error{Status: http.StatusUnprocessableEntity, Code: protocol.CodeInvalid, Field: "autoRate.healthUrl",
			Message: "autoRate.healthUrl: " + err.Error()}
	}
	return nil
}
