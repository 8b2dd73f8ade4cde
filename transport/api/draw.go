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

// handleDraw reveals the room's latest committed draw made: the key, the
// beacon round and the range, so anyone can recompute every position
// (docs/draw.md). A room whose only committed draw is still sealed answers
// 425; one armed again after a draw keeps revealing the draw made.
func (s *Server) handleDraw(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	v := r.View
	d, ok := v.LatestCommitted()
	if !ok {
		if state, _ := v.DrawState(); state == "sealed" || state == "closed" {
			return errNotDrawn
		}
		return errNoDraw
	}
	rev, _ := d.Reveal()
	c.Response().Header().Set("Cache-Control", "public, max-age=60")
	return c.JSON(http.StatusOK, rev)
}
