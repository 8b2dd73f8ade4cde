package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/labstack/echo/v4"
)

// errNoBypass is the one answer for every code that does not work:
// unknown, expired, exhausted, disabled, or a paused room. Same status,
// same body, same headers, so the route is no oracle for guessing codes.
var errNoBypass = errorf(http.StatusNotFound, "not_found", "Not found.")

// bypassAnswer is POST /bypass's answer.
type bypassAnswer struct {
	Token            string  `json:"token"`
	TargetURL        *string `json:"targetUrl"`
	ExpiresInSeconds int     `json:"expiresInSeconds"`
}

// normalizeCode accepts a code as people type it: any case, spaces around.
func normalizeCode(code string) string {
	return strings.ToUpper(strings.TrimSpace(code))
}

// codeBody is the body of POST /queue/<slug>/bypass.
type codeBody struct {
	Code string `json:"code"`
}

// handleBypass redeems a VIP code for an admission token (qnr 0, byp true).
// A redemption takes no regular admission slot. Every attempt costs one of
// the client address's code budget (429 beyond it).
func (s *Server) handleBypass(c echo.Context) error {
	if err := s.codeAttempts.take(c); err != nil {
		return err
	}
	body, r, err := bindRoom[codeBody](s, c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	code := normalizeCode(body.Code)
	if code == "" || len(code) > 100 {
		return errNoBypass
	}
	t, err := s.client.Redeem(c.Request().Context(), r.View.ID, code)
	if protocol.IsCode(err, protocol.CodeNoCode) || protocol.IsCode(err, protocol.CodeNotFound) {
		return errNoBypass
	}
	if err != nil {
		return err
	}
	a := bypassAnswer{Token: t.Token, ExpiresInSeconds: max(0, int(t.ExpiresAt.Sub(s.now()).Round(time.Second).Seconds()))}
	if t.TargetURL != "" {
		u := t.TargetURL
		a.TargetURL = &u
	}
	return c.JSON(http.StatusOK, a)
}
