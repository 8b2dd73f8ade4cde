package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

var (
	errNoDraw   = errorf(http.StatusNotFound, "no_draw", "This waiting room has no committed draw.")
	errNotDrawn = errorf(http.StatusTooEarly, "not_drawn", "The draw is sealed and not made yet; its commitment is in /info.")
)

// drawInfo is the draw's part of /info: its state and commitment.
type drawInfo struct {
	State string `json:"state"`
	room.PublicCommitment
	RevealURL string `json:"revealUrl"`
}

// drawOf returns the room's draw for /info, nil without a committed draw.
func drawOf(v *room.View) *drawInfo {
	state, c := v.DrawState()
	if c == nil {
		return nil
	}
	return &drawInfo{State: state, PublicCommitment: c.Public(), RevealURL: "/queue/" + v.Config.Slug + "/draw"}
}

// handleDraw reveals the room's latest committed draw: the key, the beacon
// round and the range, so anyone can recompute every position
// (docs/draw.md). While a draw is sealed it answers 425.
func (s *Server) handleDraw(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	v := r.View
	if state, _ := v.DrawState(); state == "sealed" || state == "closed" {
		return errNotDrawn
	}
	d, ok := v.LatestCommitted()
	if !ok {
		return errNoDraw
	}
	rev, _ := d.Reveal()
	c.Response().Header().Set("Cache-Control", "public, max-age=60")
	return c.JSON(http.StatusOK, rev)
}
