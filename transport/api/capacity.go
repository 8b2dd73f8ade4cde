package api

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// Capacity rooms in the admin API. A capacity room is declared in the
// proxies' HCL file, not created here: the list is what the proxy nodes
// announce (protocol.KindCapacityIndex), a room's state is its grain's, and a
// change of its runtime settings is an adjusted event in its log. Only the
// operator reads and changes them: a room's qak_ key belongs to one rate
// room, and capacity rooms have none.

func (s *Server) registerCapacity(g *echo.Group) {
	g.GET("/capacity", s.adminOnly(s.handleCapacityList))
	g.GET("/capacity/:id", s.adminOnly(s.handleCapacityGet))
	g.PATCH("/capacity/:id", s.adminOnly(s.handleCapacityAdjust))
}

// capacityRoom is a list entry: Kind tells it from a rate room.
type capacityRoom struct {
	protocol.CapacityRoom
	Kind string `json:"kind"`
}

func (s *Server) handleCapacityList(c echo.Context) error {
	l, err := s.client.CapacityRooms(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]capacityRoom, 0, len(l.Rooms))
	for _, r := range l.Rooms {
		out = append(out, capacityRoom{CapacityRoom: r, Kind: "capacity"})
	}
	return c.JSON(http.StatusOK, map[string]any{"rooms": out, "refused": l.Refused})
}

// capacityID reads the path's room id: 404 for anything that is not the
// id of a room the proxy nodes announce. The index is asked first, so that
// an id nobody announced (a typing mistake, a scan of ids) never activates
// a grain, which would write its stream's first marker and snapshot to the
// log. A room announced before a fail-over of the index is found again
// with the next announcement (protocol.AnnounceInterval).
func (s *Server) capacityID(c echo.Context) (string, error) {
	id := c.Param("id")
	if !protocol.IsCapacityID(id) {
		return "", errorf(http.StatusNotFound, "not_found", "No capacity room has this id.")
	}
	l, err := s.client.CapacityRooms(c.Request().Context())
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(l.Rooms, func(r protocol.CapacityRoom) bool { return r.ID == id }) {
		return "", errorf(http.StatusNotFound, "not_found", "No proxy node announces this capacity room.")
	}
	return id, nil
}

func (s *Server) handleCapacityGet(c echo.Context) error {
	id, err := s.capacityID(c)
	if err != nil {
		return err
	}
	st, err := s.client.CapacityState(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if st.File.Active == 0 {
		return errorf(http.StatusNotFound, "not_found", "No proxy node has served this capacity room.")
	}
	c.Response().Header().Set("ETag", capacityETag(st.Runtime.Version))
	return c.JSON(http.StatusOK, st)
}

// handleCapacityAdjust changes a capacity room's runtime settings. The
// version is the body's, or If-Match's when given (the ETag of the read).
func (s *Server) handleCapacityAdjust(c echo.Context) error {
	id, err := s.capacityID(c)
	if err != nil {
		return err
	}
	var a capacity.Adjust
	if err := bind(c, &a); err != nil {
		return err
	}
	if h := strings.TrimSpace(c.Request().Header.Get("If-Match")); h != "" && h != "*" {
		v, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(h, "W/"), `"`), 10, 64)
		if err != nil || v < 0 {
			return errorf(http.StatusConflict, "conflict", "If-Match names no version of this room: read it again, then save.")
		}
		a.Version = v
	}
	ctx := c.Request().Context()
	if cur, err := s.client.CapacityState(ctx, id); err != nil {
		return err
	} else if cur.File.Active == 0 {
		return errorf(http.StatusNotFound, "not_found", "No proxy node has served this capacity room.")
	}
	st, err := s.client.CapacityAdjust(ctx, id, a, "admin")
	var ne *protocol.Error
	switch {
	case errors.As(err, &ne) && ne.Code == protocol.CodeInvalid:
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: ne.Message, Field: ne.Field}
	case errors.As(err, &ne) && ne.Code == protocol.CodeRateLimited:
		return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: ne.Message, RetryAfter: 60}
	case err != nil:
		return err
	}
	c.Response().Header().Set("ETag", capacityETag(st.Runtime.Version))
	return c.JSON(http.StatusOK, st)
}

func capacityETag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }
