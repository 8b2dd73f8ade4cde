package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// principal is who makes an admin call: the operator (admin token) or a
// qak_ key bound to one room.
type principal struct {
	admin   bool
	keyHash []byte
	roomID  string
}

func (p principal) request() protocol.AdminRequest {
	if p.admin {
		return protocol.AdminRequest{Actor: "admin"}
	}
	return protocol.AdminRequest{KeyHash: p.keyHash}
}

const principalKey = "aq.principal"

func (s *Server) registerAdmin(e *echo.Echo) {
	g := e.Group("/api/admin/queue", s.authenticate)
	g.GET("/sites", s.handleSiteList)
	g.POST("/sites", s.adminOnly(s.handleSiteCreate))
	g.GET("/sites/:id", s.handleSiteGet)
	g.PATCH("/sites/:id", s.handleSiteUpdate)
	g.DELETE("/sites/:id", s.adminOnly(s.handleSiteDelete))
	g.POST("/sites/:id/secret", s.adminOnly(s.handleSecretRotate))
	g.POST("/sites/:id/keys", s.adminOnly(s.handleKeyCreate))
	g.GET("/sites/:id/keys", s.adminOnly(s.handleKeyList))
	g.DELETE("/sites/:id/keys/:keyId", s.adminOnly(s.handleKeyDelete))
	g.POST("/sites/:id/bypass-codes", s.adminOnly(s.handleCodeCreate))
	g.GET("/sites/:id/bypass-codes", s.adminOnly(s.handleCodeList))
	g.PATCH("/sites/:id/bypass-codes/:codeId", s.adminOnly(s.handleCodeUpdate))
	g.DELETE("/sites/:id/bypass-codes/:codeId", s.adminOnly(s.handleCodeDelete))
	g.GET("/sites/:id/audit", s.adminOnly(s.handleAudit))
	s.registerLoadTests(g, e)
	s.registerCapacity(g)
	g.POST("/sites/:id/health-check/test", s.handleHealthTest)
	g.GET("/sites/:id/rate-log", s.handleRateLog)
	g.GET("/sites/:id/preview", s.handleSitePreview)
	for _, add := range s.adminRoutes {
		add(g, s.adminOnly)
	}
	g.Any("/*", func(c echo.Context) error {
		if p := c.Get(principalKey).(principal); !p.admin {
			return errForbidden
		}
		return echo.ErrNotFound
	})
}

// authenticate accepts the admin token or a qak_ key as a bearer token
// (adminauth: compared by hash in constant time; failures limited per
// client address).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		tok, _ := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		p, err := s.auth.Authenticate(c.Request().Context(), c.Request(), tok)
		if err != nil {
			return authError(c, err)
		}
		c.Set(principalKey, principal{admin: p.Operator, keyHash: p.KeyHash, roomID: p.RoomID})
		return next(c)
	}
}

// authError answers a refused sign-in: 429 with Retry-After for an
// address that failed too often, 503 when the cluster did not answer, 401
// otherwise.
func authError(c echo.Context, err error) error {
	var lim *adminauth.Limited
	switch {
	case errors.As(err, &lim):
		c.Response().Header().Set("Retry-After", ratelimit.RetryAfter(lim.RetryAfter))
		return errTooManyFailures
	case errors.Is(err, adminauth.ErrBusy):
		return protocol.ErrUnavailable
	}
	return errUnauthorize
}

var errTooManyFailures = errorf(http.StatusTooManyRequests, "rate_limited", adminauth.LimitedMessage)

func (s *Server) adminOnly(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := c.Get(principalKey).(principal); !p.admin {
			return errForbidden
		}
		return h(c)
	}
}

// knownRoom reports whether id is a room of the directory (adminauth's
// list, cached for a few seconds).
func (s *Server) knownRoom(ctx context.Context, id string) bool {
	ok, err := s.auth.KnownRoom(ctx, id)
	return ok && err == nil
}

// site is a room as the admin API shows it.
type site struct {
	ID string `json:"id"`
	room.Config
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func siteOf(v *room.View) site {
	cfg := v.Settings()
	if cfg.Mode == "" {
		cfg.Mode = room.ModeQueue // rooms configured before modes
	}
	if cfg.WaitingStatus == 0 {
		cfg.WaitingStatus = 200
	}
	// Rooms configured before address budgets and pow.auto: what is in force.
	cfg.AddressBudget = cfg.AddressBudget.Effective()
	if cfg.Pow.AutoFactor == 0 {
		cfg.Pow.AutoFactor = room.DefaultPowAutoFactor
	}
	if cfg.OpensAt != nil {
		t := cfg.OpensAt.UTC()
		cfg.OpensAt = &t
	}
	return site{ID: v.ID, Config: cfg, CreatedAt: time.Unix(0, v.CreatedAt).UTC(), UpdatedAt: time.Unix(0, v.UpdatedAt).UTC()}
}

// siteID checks the :id of the path against the principal.
func (s *Server) siteID(c echo.Context) (string, principal, error) {
	id := c.Param("id")
	p := c.Get(principalKey).(principal)
	if !p.admin && id != p.roomID {
		return "", p, errForbidden
	}
	if p.admin && !s.knownRoom(c.Request().Context(), id) {
		return "", p, errNoSite
	}
	return id, p, nil
}

var errNoSite = errorf(http.StatusNotFound, "not_found", "No such site.")

func (s *Server) getSite(ctx context.Context, id string, p principal) (*room.View, error) {
	var v room.View
	if err := s.client.Admin(ctx, id, protocol.OpGet, p.request(), &v); err != nil {
		return nil, err
	}
	if !v.Exists || v.Deleted {
		return nil, errNoSite
	}
	return &v, nil
}

func (s *Server) handleSiteList(c echo.Context) error {
	ctx := c.Request().Context()
	p := c.Get(principalKey).(principal)
	sites := []site{}
	if !p.admin {
		v, err := s.getSite(ctx, p.roomID, p)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"sites": append(sites, siteOf(v))})
	}
	list, err := s.client.List(ctx)
	if err != nil {
		return err
	}
	for _, e := range list {
		v, err := s.getSite(ctx, e.ID, p)
		if err == errNoSite {
			continue
		}
		if err != nil {
			return err
		}
		sites = append(sites, siteOf(v))
	}
	return c.JSON(http.StatusOK, map[string]any{"sites": sites})
}

func (s *Server) handleSiteCreate(c echo.Context) error {
	var cfg room.Config
	cfg.Active = true
	if err := bind(c, &cfg); err != nil {
		return err
	}
	if err := s.checkHealthURL(c.Request().Context(), &cfg, ""); err != nil {
		return err
	}
	if s.roomGuard != nil {
		if err := s.roomGuard(); err != nil {
			return errorf(http.StatusInsufficientStorage, "insufficient_storage", err.Error())
		}
	}
	res, err := s.client.Create(c.Request().Context(), cfg, "admin")
	if err != nil {
		return err
	}
	s.auth.RoomsChanged("")
	return c.JSON(http.StatusCreated, map[string]any{"site": siteOf(&res.View), "secret": res.Secret})
}

// pathSite reads the :id room of the path, checked against the principal.
func (s *Server) pathSite(c echo.Context) (*room.View, error) {
	id, p, err := s.siteID(c)
	if err != nil {
		return nil, err
	}
	return s.getSite(c.Request().Context(), id, p)
}

func (s *Server) handleSiteGet(c echo.Context) error {
	v, err := s.pathSite(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", etagOf(v))
	return c.JSON(http.StatusOK, siteOf(v))
}

// handleSiteUpdate takes the whole configuration without slug; unknown
// fields (id, timestamps) are ignored. With If-Match, only over the
// version it names (siteversion.go).
func (s *Server) handleSiteUpdate(c echo.Context) error {
	id, p, err := s.siteID(c)
	if err != nil {
		return err
	}
	version, err := ifVersion(c)
	if err != nil {
		return err
	}
	var cfg room.Config
	if err := bind(c, &cfg); err != nil {
		return err
	}
	cur, err := s.getSite(c.Request().Context(), id, p)
	if err != nil {
		return err
	}
	if err := s.checkHealthURL(c.Request().Context(), &cfg, cur.Config.AutoRate.HealthURL); err != nil {
		return err
	}
	req := p.request()
	req.Config, req.IfVersion = &cfg, version
	var v room.View
	if err := s.client.Admin(c.Request().Context(), id, protocol.OpConfigure, req, &v); err != nil {
		return err
	}
	c.Response().Header().Set("ETag", etagOf(&v))
	return c.JSON(http.StatusOK, siteOf(&v))
}

func (s *Server) handleSiteDelete(c echo.Context) error {
	id, p, err := s.siteID(c)
	if err != nil {
		return err
	}
	var v room.View
	if err := s.client.Admin(c.Request().Context(), id, protocol.OpDelete, p.request(), &v); err != nil {
		return err
	}
	s.auth.RoomsChanged(id)
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleSecretRotate(c echo.Context) error {
	return s.adminCall(c, protocol.OpRotate, func(r *protocol.AdminRequest) error { return nil }, http.StatusOK, new(map[string]string))
}

func (s *Server) handleKeyCreate(c echo.Context) error {
	var body struct {
		Name string `json:"name"`
	}
	return s.adminCall(c, protocol.OpKeyAdd, func(r *protocol.AdminRequest) error {
		if err := bind(c, &body); err != nil {
			return err
		}
		r.Name = body.Name
		return nil
	}, http.StatusCreated, new(protocol.KeyInfo))
}

func (s *Server) handleKeyList(c echo.Context) error {
	return adminList[protocol.KeyInfo](s, c, protocol.OpKeyList, "keys")
}

func (s *Server) handleKeyDelete(c echo.Context) error {
	return s.adminRemove(c, protocol.OpKeyRemove, "keyId")
}

func (s *Server) handleCodeCreate(c echo.Context) error {
	var body struct {
		Label      string     `json:"label"`
		UsageLimit *int       `json:"usageLimit"`
		ExpiresAt  *time.Time `json:"expiresAt"`
	}
	return s.adminCall(c, protocol.OpCodeAdd, func(r *protocol.AdminRequest) error {
		if err := bind(c, &body); err != nil {
			return err
		}
		r.Label, r.Limit, r.Expires = body.Label, body.UsageLimit, body.ExpiresAt
		return nil
	}, http.StatusCreated, new(protocol.CodeInfo))
}

func (s *Server) handleCodeList(c echo.Context) error {
	return adminList[protocol.CodeInfo](s, c, protocol.OpCodeList, "codes")
}

func (s *Server) handleCodeUpdate(c echo.Context) error {
	var body struct {
		Disabled *bool `json:"disabled"`
	}
	return s.adminCall(c, protocol.OpCodeChange, func(r *protocol.AdminRequest) error {
		if err := bind(c, &body); err != nil {
			return err
		}
		if body.Disabled == nil {
			return &Error{Status: http.StatusUnprocessableEntity, Code: protocol.CodeInvalid, Field: "disabled", Message: "disabled: true or false is required"}
		}
		r.ID, r.Disable = c.Param("codeId"), *body.Disabled
		return nil
	}, http.StatusOK, new(protocol.CodeInfo))
}

func (s *Server) handleCodeDelete(c echo.Context) error {
	return s.adminRemove(c, protocol.OpCodeRemove, "codeId")
}

// adminList answers the :id room's list op as {name: [...]}.
func adminList[T any](s *Server, c echo.Context, op, name string) error {
	var items []T
	if err := s.adminCall(c, op, nil, 0, &items); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{name: items})
}

// adminRemove runs the removal op on the item the path's param names, and
// answers 204.
func (s *Server) adminRemove(c echo.Context, op, param string) error {
	if err := s.adminCall(c, op, func(r *protocol.AdminRequest) error {
		r.ID = c.Param(param)
		return nil
	}, 0, nil); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleAudit(c echo.Context) error {
	var entries []room.AuditEntry
	if err := s.adminCall(c, protocol.OpAudit, nil, 0, &entries); err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		out = append(out, map[string]any{"at": time.Unix(0, e.At).UTC(), "actor": e.Actor, "action": e.Action, "detail": e.Detail})
	}
	return c.JSON(http.StatusOK, map[string]any{"audit": out})
}

// adminCall runs one admin operation on the :id room; with status 0 the
// caller writes the answer itself.
func (s *Server) adminCall(c echo.Context, op string, fill func(*protocol.AdminRequest) error, status int, out any) error {
	id, p, err := s.siteID(c)
	if err != nil {
		return err
	}
	req := p.request()
	if fill != nil {
		if err := fill(&req); err != nil {
			return err
		}
	}
	if _, err := s.getSite(c.Request().Context(), id, p); err != nil {
		return err
	}
	if err := s.client.Admin(c.Request().Context(), id, op, req, out); err != nil {
		return err
	}
	if status == 0 {
		return nil
	}
	return c.JSON(status, out)
}
