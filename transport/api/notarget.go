package api

import (
	"bytes"
	"io"
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
	return s.problem(c, errNoTarget, web.RenderNoTarget)
}

// tooManyCodes answers errTooManyAttempts (Retry-After already set) to the
// gateway link: the page for browsers, JSON for everybody else.
func (s *Server) tooManyCodes(c echo.Context) error {
	return s.problem(c, errTooManyAttempts, web.RenderTooManyCodes)
}

// problem answers e: a page rendered by render for browsers (whose Accept
// names text/html) with e's status, e itself for everybody else.
func (s *Server) problem(c echo.Context, e *Error, render func(io.Writer, string) error) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept")
	if !strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
		return e
	}
	lang := s.pageLang(c, "")
	var buf bytes.Buffer
	if err := render(&buf, lang); err != nil {
		return err
	}
	return c.HTMLBlob(e.Status, buf.Bytes())
}
