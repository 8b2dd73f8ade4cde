package api

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/transport/web"
)

// errNoTarget answers the gateway link of a room without a target URL when
// the link names no valid return URL either: there is nowhere to forward
// the visitor, so nobody is queued for nothing (the seed: the target URL
// "is required for the gateway link").
var errNoTarget = errorf(http.StatusConflict, "no_target",
	"This waiting room has no target URL, so its gateway link cannot forward anyone: set the room's targetUrl, or link with ?return= naming a page of the room's domains.")

// noTarget answers errNoTarget: an HTML page for browsers (whose Accept
// names text/html), the contract's JSON error for everybody else.
func (s *Server) noTarget(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept")
	if !strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
		return errNoTarget
	}
	lang := web.Lang(c.Request().Header.Get("Accept-Language"))
	var buf bytes.Buffer
	if err := web.RenderNoTarget(&buf, lang); err != nil {
		return err
	}
	h.Set("Content-Language", lang)
	h.Add("Vary", "Accept-Language")
	return c.HTMLBlob(errNoTarget.Status, buf.Bytes())
}
