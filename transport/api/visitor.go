package api

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/transport/returnurl"
	"github.com/aditus-queue/aditus-queue/transport/web"
)

func (s *Server) registerVisitor(e *echo.Echo) {
	e.GET("/queue/healthz", s.handleHealthz)
	e.GET("/queue/assets/*", echo.WrapHandler(web.Assets()))
	e.GET("/queue/:slug", s.handlePage)
	e.POST("/queue/:slug/join", s.handleJoin)
	e.GET("/queue/:slug/status", s.handleStatus)
	e.POST("/queue/:slug/token", s.handleToken)
	e.GET("/queue/:slug/info", s.handleInfo)
	e.GET("/queue/:slug/draw", s.handleDraw)
	e.GET("/queue/:slug/verify", s.handleVerify)
	e.POST("/queue/:slug/heartbeat", s.handleHeartbeat)
	e.GET("/queue/:slug/embed.js", s.handleEmbed)
	e.GET("/queue/:slug/wait", s.handleWait)
	e.POST("/queue/:slug/wait", s.handleWaitJoin)
	e.GET("/queue/:slug/enter", s.handleEnter)
	e.HEAD("/queue/:slug/enter", s.handleEnter)
	e.GET("/queue/:slug/pow", s.handlePow)
	e.POST("/queue/:slug/bypass", s.handleBypass)
	e.OPTIONS("/queue/:slug/*", s.handlePreflight)
}

// handleHealthz answers without touching the log or a grain: 503
// unhealthy once the node's log failed for good (it ends soon), else 200,
// ok or degraded.
func (s *Server) handleHealthz(c echo.Context) error {
	status, body := s.health()
	return c.JSON(status, body)
}

// health is the healthz answer with its status. The unhealthy reason leaves
// out the path and the system's words, which are in the node's log.
func (s *Server) health() (int, map[string]any) {
	if s.node.LogErr() != nil {
		return http.StatusServiceUnavailable, map[string]any{"status": "unhealthy",
			"reason": "the event log failed (the disk refused a write or an fsync); joins are refused and the node restarts"}
	}
	body := Health(s.views)
	if n := s.node.DamagedStreams(); n > 0 {
		reason := strconv.Itoa(n) + " stream(s) of the event log are damaged: their rooms are not served until restored from a backup (aditus-queue log verify names them)"
		if r, ok := body["reason"].(string); ok {
			reason = r + "; " + reason
		}
		body["status"], body["streamsDamaged"], body["reason"] = "degraded", n, reason
	}
	return http.StatusOK, body
}

// Health is the /queue/healthz answer of a node holding views: ok, or
// degraded with the reason while it holds rooms it cannot serve. A node
// that cannot serve a room still answers 200: it serves every other room,
// and restarting it would not change its master key.
func Health(views *front.Views) map[string]any {
	if n := len(views.Unavailable()); n > 0 {
		return map[string]any{"status": "degraded", "roomsUnavailable": n,
			"reason": strconv.Itoa(n) + " room(s) not served: their keys do not open with this node's master key (--master-key must be the same on every node)"}
	}
	return map[string]any{"status": "ok"}
}

// room resolves the slug of the request to its cached room and sets the
// CORS headers for the room's domains.
func (s *Server) room(c echo.Context) (*front.Room, error) {
	r, ok, err := s.lookup(c, c.Param("slug"))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNoRoom
	}
	s.cors(c, r)
	return r, nil
}

// cors allows the room's own shop domains, and nothing else.
func (s *Server) cors(c echo.Context, r *front.Room) {
	origin := c.Request().Header.Get("Origin")
	h := c.Response().Header()
	if len(h["Vary"]) == 0 {
		h["Vary"] = varyOrigin
	} else {
		h.Add("Vary", "Origin")
	}
	if origin == "" {
		return
	}
	if _, ok := returnurl.Check(origin+"/", r.View.Config.Domains); ok {
		h.Set("Access-Control-Allow-Origin", origin)
	}
}

func (s *Server) handlePreflight(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		h.Set("Access-Control-Max-Age", "600")
	}
	_ = r
	return c.NoContent(http.StatusNoContent)
}

// ticketAnswer is the join and status answer (the Ticket and Status
// schemas of openapi.json).
type ticketAnswer struct {
	Queue                string     `json:"queue"`
	Name                 string     `json:"name"`
	Number               uint64     `json:"number"`
	Serving              uint64     `json:"serving"`
	Ahead                uint64     `json:"ahead"`
	Admitted             bool       `json:"admitted"`
	EstimatedWaitSeconds int        `json:"estimatedWaitSeconds"`
	RetryAfterSeconds    int        `json:"retryAfterSeconds"`
	Active               *bool      `json:"active,omitempty"`
	Ticket               string     `json:"ticket,omitempty"`
	OpensAt              *time.Time `json:"opensAt,omitempty"`
	Position             *uint64    `json:"position,omitempty"`
	// Mode is the room's mode when it is not queue.
	Mode string `json:"mode,omitempty"`
	// Token is the admission token, given with the number in passthrough.
	Token string `json:"token,omitempty"`
}

func answerOf(v *room.View, st room.Status) ticketAnswer {
	a := ticketAnswer{Queue: v.Config.Slug, Name: v.Config.Name, Number: st.Number, Serving: st.Serving,
		Ahead: st.Ahead, Admitted: st.Admitted, EstimatedWaitSeconds: st.EstimatedWait, RetryAfterSeconds: st.RetryAfter,
		Mode: modeField(v)}
	if st.OpensAt != nil {
		t := st.OpensAt.UTC()
		a.OpensAt = &t
	}
	if st.Drawn {
		p := st.Position
		a.Position = &p
	}
	return a
}

type joinBody struct {
	Pow *powSolution `json:"pow"`
}

type powSolution struct {
	Challenge string `json:"challenge"`
	Nonce     string `json:"nonce"`
}

func (s *Server) handleJoin(c echo.Context) error {
	body, r, err := bindRoom[joinBody](s, c)
	if err != nil {
		return err
	}
	if e := closedError(r.View); e != nil {
		return e
	}
	if r.View.Paused() {
		return errPaused
	}
	if err := s.admitJoin(c, r, body.Pow); err != nil {
		return err
	}
	res, err := s.client.Join(c.Request().Context(), r.View.ID)
	if err != nil {
		return err
	}
	v := &res.View
	a := answerOf(v, v.StatusOf(res.Number, s.now().UnixNano()))
	a.Ticket = res.Ticket
	if a.Admitted && v.EffectiveMode() == room.ModePassthrough {
		// Nobody waits: the token comes with the number.
		if t, err := s.client.Token(c.Request().Context(), v.ID, res.Number); err == nil {
			a.Token = t.Token
		}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.writeAnswer(c, v, a)
}

// number reads the visitor's number from a ticket (or, for read-only
// status and where the room allows it, from a bare number).
func (s *Server) number(r *front.Room, ticket, bare string, allowBare bool) (uint64, error) {
	if ticket != "" {
		n, err := room.ParseTicket(r.TicketKey, r.View.ID, ticket)
		if err != nil {
			return 0, errBadTicket
		}
		return n, nil
	}
	if bare != "" && allowBare {
		n, err := strconv.ParseUint(bare, 10, 64)
		if err != nil || n == 0 {
			return 0, errorf(http.StatusBadRequest, "bad_request", "number must be a positive integer")
		}
		return n, nil
	}
	if bare != "" {
		return 0, errBadTicket
	}
	return 0, errNeedTicket
}

// handleStatus is read-only arithmetic on the cached view: no grain call.
// A bare ?number=N is always accepted here: status reveals nothing that
// serving and the number do not already tell.
func (s *Server) handleStatus(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	q := c.Request().URL.RawQuery
	ticket := queryValue(q, "ticket")
	n, err := s.number(r, ticket, queryValue(q, "number"), true)
	if err != nil {
		return err
	}
	v := r.View
	if e := closedError(v); e != nil {
		return e
	}
	if n > v.Issued {
		// A ticket proves issuance even when this node's view lags a join.
		if ticket == "" {
			return errNotIssued
		}
	}
	if ticket != "" && v.Unplaced(n) {
		// A ticket of a restore's jump came back: the grain places it
		// (actors/room/restore.go) when the report reaches it.
		s.views.Seen(v.ID, n)
	}
	st := v.StatusOf(n, s.now().UnixNano())
	a := answerOf(v, st)
	a.Active = boolRef(st.Active)
	h := c.Response().Header()
	h["Retry-After"] = retryAfterValue(st.RetryAfter)
	h["Cache-Control"] = noStore
	return s.writeAnswer(c, v, a)
}

type tokenBody struct {
	Ticket string  `json:"ticket"`
	Number *uint64 `json:"number"`
}

// bodyNumber reads the visitor's number from a token or heartbeat body: the
// ticket, or a bare number where the room allows it (as number does for
// query parameters).
func (s *Server) bodyNumber(r *front.Room, body tokenBody) (uint64, error) {
	if body.Ticket != "" || body.Number == nil {
		return s.number(r, body.Ticket, "", false)
	}
	if !r.View.Config.AllowBareNumber {
		return 0, errBadTicket
	}
	if *body.Number == 0 {
		return 0, errorf(http.StatusBadRequest, "bad_request", "number must be a positive integer")
	}
	return *body.Number, nil
}

// grant is the token answer (the Grant schema of openapi.json).
type grant struct {
	Queue            string  `json:"queue"`
	Number           uint64  `json:"number"`
	Token            string  `json:"token"`
	TokenType        string  `json:"tokenType"`
	ExpiresInSeconds int     `json:"expiresInSeconds"`
	TargetURL        *string `json:"targetUrl"`
}

func (s *Server) grantOf(r *front.Room, t *protocol.TokenResult) grant {
	g := grant{Queue: r.View.Config.Slug, Number: t.Number, Token: t.Token, TokenType: "JWT",
		ExpiresInSeconds: int(time.Until(t.ExpiresAt).Round(time.Second).Seconds())}
	if g.ExpiresInSeconds < 0 {
		g.ExpiresInSeconds = 0
	}
	if t.TargetURL != "" {
		u := t.TargetURL
		g.TargetURL = &u
	}
	return g
}

func (s *Server) handleToken(c echo.Context) error {
	body, r, err := bindRoom[tokenBody](s, c)
	if err != nil {
		return err
	}
	n, err := s.bodyNumber(r, body)
	if err != nil {
		return err
	}
	if e := closedError(r.View); e != nil {
		return e
	}
	t, err := s.client.Token(c.Request().Context(), r.View.ID, n)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, s.grantOf(r, t))
}

func (s *Server) handleInfo(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	v, now := r.View, s.now().UnixNano()
	info := map[string]any{
		"queue": v.Config.Slug, "name": v.Config.Name, "active": v.Config.Active,
		"serving": v.Serving(now), "waiting": v.Waiting(now),
	}
	if d := drawOf(v); d != nil {
		info["draw"] = d
	}
	return c.JSON(http.StatusOK, info)
}

// handleVerify checks an admission token server-side for embed.js.
func (s *Server) handleVerify(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	cl, err := token.Verify(r.Secret, r.View.Config.Slug, c.QueryParam("token"), s.now())
	if err != nil {
		return c.JSON(http.StatusUnauthorized, map[string]any{"valid": false, "error": "invalid_token",
			"message": "The admission token is missing, expired or not for this waiting room."})
	}
	return c.JSON(http.StatusOK, map[string]any{"valid": true, "queue": r.View.Config.Slug, "number": cl.Number,
		"bypass": cl.Bypass, "expiresAt": cl.ExpiresAt.Time.UTC().Format(time.RFC3339)})
}

// handleHeartbeat records presence for abandon detection. While detection
// is off it is accepted silently, as the seed promises.
func (s *Server) handleHeartbeat(c echo.Context) error {
	body, r, err := bindRoom[tokenBody](s, c)
	if err != nil {
		return err
	}
	if !r.View.Config.Abandon.Enabled {
		return c.NoContent(http.StatusNoContent)
	}
	n, err := s.bodyNumber(r, body)
	if err != nil {
		return err
	}
	s.views.Seen(r.View.ID, n)
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handlePage(c echo.Context) error {
	slug := c.Param("slug")
	r, ok, err := s.lookup(c, slug)
	if err != nil {
		return err
	}
	if wantsJSON(c) {
		if !ok {
			return errNoRoom
		}
		return s.handleAppState(c, r)
	}
	roomLang := ""
	if ok {
		roomLang = r.View.Config.Language
	}
	lang := s.pageLang(c, roomLang)
	// No BaseURL: the page loads its assets and calls the API on its own
	// origin, so it works however it is reached (another --addr, a proxy).
	page := web.RoomPage{Slug: slug, Lang: lang, Found: ok, Query: c.Request().URL.RawQuery}
	if ok {
		cfg := r.View.Config
		page.Name, page.Message, page.HeaderImageURL, page.AccentColor = cfg.Name, cfg.MessageIn(lang), cfg.HeaderImageURL, cfg.AccentColor
		page.Mode, page.Paused = r.View.EffectiveMode(), r.View.Paused()
		if m, ok := closedModeMessage(r.View); ok {
			page.ModeText, page.ModeLink = m.Text(lang), m.LinkURL
		}
		// A ticket in the address (the gateway link's, embed.js's): its
		// number is in the page itself, one round trip sooner.
		if n, err := room.ParseTicket(r.TicketKey, r.View.ID, c.QueryParam("ticket")); err == nil {
			page.Number, page.Ticket = n, c.QueryParam("ticket")
		}
		page.PowEnabled, page.PowBits = r.View.PowInForce()
		page.Domains = cfg.Domains
		if u, ok := returnurl.Check(c.QueryParam("return"), cfg.Domains); ok {
			returnurl.StripToken(u)
			page.ReturnURL = u.String()
		}
	}
	var buf bytes.Buffer
	if err := web.RenderRoom(&buf, page); err != nil {
		return err
	}
	status := http.StatusOK
	if !ok {
		status = http.StatusNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	// The page's address carries the visitor's ticket: no other page may
	// frame it, and it is never sent on as a referrer.
	h.Set("Content-Security-Policy", page.ContentSecurityPolicy())
	h.Set("Referrer-Policy", "no-referrer")
	h.Add("Vary", "Accept") // apps get JSON (appstate.go)
	return c.HTMLBlob(status, buf.Bytes())
}

func (s *Server) handleEmbed(c echo.Context) error {
	slug := c.Param("slug")
	var buf bytes.Buffer
	if err := web.RenderEmbed(&buf, web.Embed{Slug: slug, BaseURL: s.public}); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", buf.Bytes())
}

// handleEnter is the gateway link: below the rate straight to the shop with
// a token, otherwise into the waiting room holding a number already.
func (s *Server) handleEnter(c echo.Context) error {
	r, ok, err := s.lookup(c, c.Param("slug"))
	if err != nil {
		return err
	}
	if !ok {
		return s.handlePage(c)
	}
	cfg := r.View.Config
	target := cfg.TargetURL
	if u, ok := returnurl.Check(c.QueryParam("return"), cfg.Domains); ok {
		returnurl.StripToken(u)
		target = u.String()
	}
	if target == "" {
		return s.noTarget(c)
	}
	room := s.public + "/queue/" + url.PathEscape(cfg.Slug)
	if isPreview(c.Request()) {
		// A previewer or a prefetch: the page, which draws the number
		// when a visitor's browser runs it. A code is redeemed only by
		// the visitor's own request.
		return s.redirect(c, roomURL(room, "", target, cfg.TargetURL))
	}
	// A valid code goes straight through, for a browser and an app alike;
	// an invalid one falls through to the normal path with no hint.
	if tok, err := s.enterCode(c, r); err == errTooManyAttempts {
		return s.tooManyCodes(c)
	} else if err != nil {
		return err
	} else if tok != "" {
		if wantsJSON(c) {
			return s.appBypass(c, r, tok, target)
		}
		return s.redirect(c, returnurl.WithToken(target, tok))
	}
	if wantsJSON(c) {
		return s.handleAppState(c, r)
	}
	ctx := c.Request().Context()
	// Proof of work is done on the page; so is the wait of an address
	// over its budget, which the page's own join is then told.
	if on, _ := r.View.PowInForce(); on || r.View.Paused() || r.View.Closed() != nil ||
		!s.budgets.allow(r.View.ID, cfg.AddressBudget, s.clientKey(c)) {
		return s.redirect(c, roomURL(room, "", target, cfg.TargetURL))
	}
	res, err := s.client.Join(ctx, r.View.ID)
	if err != nil {
		return s.redirect(c, roomURL(room, "", target, cfg.TargetURL))
	}
	st := res.View.StatusOf(res.Number, s.now().UnixNano())
	if st.Admitted {
		if t, err := s.client.Token(ctx, r.View.ID, res.Number); err == nil {
			return s.redirect(c, returnurl.WithToken(target, t.Token))
		}
	}
	return s.redirect(c, roomURL(room, res.Ticket, target, cfg.TargetURL))
}

// enterCode redeems the bypass code of /enter's ?code=, counted against the
// address's code attempts: the token, or "" when there is no code or it
// does not work.
func (s *Server) enterCode(c echo.Context, r *front.Room) (string, error) {
	if c.QueryParam("code") == "" {
		return "", nil
	}
	if err := s.codeAttempts.take(c); err != nil {
		return "", err
	}
	code := normalizeCode(c.QueryParam("code"))
	if code == "" || len(code) > 100 {
		return "", nil
	}
	t, err := s.client.Redeem(c.Request().Context(), r.View.ID, code)
	if err != nil {
		return "", nil
	}
	return t.Token, nil
}

// redirect sends the visitor on; the address may carry a ticket or a
// token, so it is never sent on as a referrer.
func (s *Server) redirect(c echo.Context, to string) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return c.Redirect(http.StatusFound, to)
}

func roomURL(room, ticket, ret, defaultTarget string) string {
	q := url.Values{}
	if ticket != "" {
		q.Set("ticket", ticket)
	}
	if ret != "" && ret != defaultTarget {
		q.Set("return", ret)
	}
	if len(q) == 0 {
		return room
	}
	return room + "?" + q.Encode()
}
