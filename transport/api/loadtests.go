package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// registerLoadTests adds the load-test and schedule routes: admin token
// only, so every one answers 403 to a qak_ key. The live socket is on e,
// outside the bearer-header group, because browsers cannot set headers on
// a WebSocket; it authenticates itself.
func (s *Server) registerLoadTests(g *echo.Group, e *echo.Echo) {
	g.POST("/loadtests", s.adminOnly(s.handleLoadTestStart))
	g.GET("/loadtests", s.adminOnly(s.handleLoadTestList))
	g.GET("/loadtests/:id", s.adminOnly(s.handleLoadTestGet))
	g.POST("/loadtests/:id/stop", s.adminOnly(s.handleLoadTestStop))
	g.POST("/schedules", s.adminOnly(s.handleScheduleCreate))
	g.GET("/schedules", s.adminOnly(s.handleScheduleList))
	g.DELETE("/schedules/:id", s.adminOnly(s.handleScheduleDelete))
	e.GET("/api/admin/queue/loadtests/:id/live", s.handleLoadTestLive)
}

// specBody is a load test as the API takes it.
type specBody struct {
	SiteID          string  `json:"siteId"`
	Profile         string  `json:"profile"`
	RatePerSecond   float64 `json:"ratePerSecond"`
	DurationSeconds int     `json:"durationSeconds"`
}

func invalidField(field, msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: protocol.CodeInvalid, Message: field + ": " + msg, Field: field}
}

// testSpec validates b against the limits and checks that its room is a
// test room whose address budget lets most of the run's joins through;
// the spec it returns carries the room's slug.
func (s *Server) testSpec(ctx context.Context, b specBody) (loadtest.Spec, error) {
	spec := loadtest.Spec{SiteID: b.SiteID, Profile: loadtest.Profile(b.Profile), RatePerSecond: b.RatePerSecond,
		DurationSeconds: b.DurationSeconds}
	if err := spec.Validate(s.loadTestLimits); err != nil {
		var fe *loadtest.FieldError
		if errors.As(err, &fe) {
			return spec, invalidField(fe.Field, fe.Message)
		}
		return spec, err
	}
	if !s.knownRoom(ctx, spec.SiteID) {
		return spec, invalidField("siteId", "no such room")
	}
	v, err := s.getSite(ctx, spec.SiteID, principal{admin: true})
	if errors.Is(err, errNoSite) {
		return spec, invalidField("siteId", "no such room")
	}
	if err != nil {
		return spec, err
	}
	if !v.Config.Test {
		return spec, invalidField("siteId", "is a production room; load tests aim only at rooms created with \"test\": true")
	}
	budget := v.Config.AddressBudget.Effective()
	if err := spec.CheckBudget(protocol.LoadTestJoinPlan(spec.Profile), budget.PerMinute, budget.Burst); err != nil {
		var fe *loadtest.FieldError
		errors.As(err, &fe)
		return spec, invalidField(fe.Field, fe.Message)
	}
	spec.Slug = v.Config.Slug
	return spec, nil
}

func (s *Server) handleLoadTestStart(c echo.Context) error {
	var b specBody
	if err := bind(c, &b); err != nil {
		return err
	}
	spec, err := s.testSpec(c.Request().Context(), b)
	if err != nil {
		return err
	}
	run, err := s.client.LoadTestStart(c.Request().Context(), spec)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, run)
}

// handleLoadTestList answers the history newest first, paged:
// ?limit= (1–100, default 20) and ?before=<id of the last run seen>.
func (s *Server) handleLoadTestList(c echo.Context) error {
	limit := 20
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			return invalidField("limit", "must be 1–100")
		}
		limit = n
	}
	page, err := s.client.LoadTests(c.Request().Context(), limit, c.QueryParam("before"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"runs": page.Runs, "next": page.Next})
}

func (s *Server) handleLoadTestGet(c echo.Context) error {
	run, err := s.client.LoadTest(c.Request().Context(), c.Param("id"), 0)
	if err != nil {
		return err
	}
	if run.Series == nil {
		run.Series = []loadtest.Second{}
	}
	return c.JSON(http.StatusOK, runAnswer{run, run.Series})
}

// runAnswer always carries the series, empty until the first second.
type runAnswer struct {
	*loadtest.Run
	Series []loadtest.Second `json:"series"`
}

func (s *Server) handleLoadTestStop(c echo.Context) error {
	run, err := s.client.LoadTestStop(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, run)
}

func (s *Server) handleScheduleCreate(c echo.Context) error {
	var b struct {
		Cron string `json:"cron"`
		specBody
	}
	if err := bind(c, &b); err != nil {
		return err
	}
	if err := loadtest.ValidateCron(b.Cron); err != nil {
		var fe *loadtest.FieldError
		errors.As(err, &fe)
		return invalidField(fe.Field, fe.Message)
	}
	spec, err := s.testSpec(c.Request().Context(), b.specBody)
	if err != nil {
		return err
	}
	sc, err := s.client.ScheduleAdd(c.Request().Context(), loadtest.Schedule{Cron: b.Cron, Spec: spec})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, sc)
}

func (s *Server) handleScheduleList(c echo.Context) error {
	list, err := s.client.Schedules(c.Request().Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []loadtest.Schedule{}
	}
	return c.JSON(http.StatusOK, map[string]any{"schedules": list})
}

func (s *Server) handleScheduleDelete(c echo.Context) error {
	if err := s.client.ScheduleRemove(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
