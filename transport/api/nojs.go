package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/returnurl"
	"github.com/aditus-queue/aditus-queue/transport/web"
)

// The waiting page without JavaScript: POST /queue/<slug>/wait draws a
// number and keeps its ticket in a cookie; GET /queue/<slug>/wait shows
// where it stands, reloads itself with <meta http-equiv="refresh"> and,
// when the turn has come, forwards the browser with its token.

// ticketCookie holds the ticket of a visitor without JavaScript, for the
// room's path only.
const ticketCookie = "aq-ticket"

// Refresh bounds of the page without JavaScript, in seconds.
const (
	minWaitRefresh = 5
	maxWaitRefresh = 60
	// pausedWaitRefresh is the reload of a paused room's page, as often as
	// the page's script tries again.
	pausedWaitRefresh = 10
)

// pageLang is the language of a room's pages for this request: ?lang=
// (a visitor's switch, then kept in a cookie), the cookie, the room's
// setting, Accept-Language, English.
func (s *Server) pageLang(c echo.Context, roomLang string) string {
	req := c.Request()
	chosen := req.URL.Query().Get("lang")
	if web.Known(chosen) {
		c.SetCookie(&http.Cookie{Name: web.LangCookie, Value: chosen, Path: "/queue/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies()})
	} else if ck, err := req.Cookie(web.LangCookie); err == nil {
		chosen = ck.Value
	}
	lang := web.PageLang(chosen, roomLang, req.Header.Get("Accept-Language"))
	h := c.Response().Header()
	h.Set("Content-Language", lang)
	h.Add("Vary", "Accept-Language")
	h.Add("Vary", "Cookie")
	return lang
}

// secureCookies reports whether cookies should be sent over https only:
// whenever the server's public URL is https.
func (s *Server) secureCookies() bool { return strings.HasPrefix(s.public, "https://") }

func (s *Server) setTicketCookie(c echo.Context, slug, ticket string) {
	ck := &http.Cookie{Name: ticketCookie, Value: ticket, Path: "/queue/" + url.PathEscape(slug) + "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies()}
	if ticket == "" {
		ck.MaxAge = -1
	}
	c.SetCookie(ck)
}

// waitRoom is the room of a request to the page without JavaScript; a
// room that does not exist answers the page's 404.
func (s *Server) waitRoom(c echo.Context) (*front.Room, bool, error) {
	r, ok, err := s.views.BySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return nil, false, protocol.Unavailable(err)
	}
	if !ok {
		return nil, false, s.handlePage(c)
	}
	return r, true, nil
}

// handleWaitJoin draws a number for a browser without JavaScript, as
// POST /join does for the page's script, and sends it to the page that
// shows it. A room that is closed, paused or asks for proof of work gets
// no number: the page says why.
func (s *Server) handleWaitJoin(c echo.Context) error {
	r, ok, err := s.waitRoom(c)
	if !ok {
		return err
	}
	// A ticket handed over in the address (the gateway link drew the
	// number) is kept; so is the number of a browser that holds one
	// already (the form sent twice, the back button).
	if t := c.QueryParam("ticket"); t != "" {
		if _, err := room.ParseTicket(r.TicketKey, r.View.ID, t); err == nil {
			s.setTicketCookie(c, r.View.Config.Slug, t)
		}
	} else if _, held := s.waitTicket(c, r); !held {
		if answered, err := s.waitJoin(c, r); answered || err != nil {
			return err
		}
	}
	u := *c.Request().URL
	q := u.Query()
	q.Del("ticket")
	u.RawQuery = q.Encode()
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, u.RequestURI())
}

// waitJoin draws the number of handleWaitJoin, where the room gives one;
// answered reports that it has answered the request itself.
func (s *Server) waitJoin(c echo.Context, r *front.Room) (answered bool, err error) {
	v := r.View
	if on, _ := v.PowInForce(); on || v.Closed() != nil || v.Paused() {
		return false, nil
	}
	if err := s.admitJoin(c, r, nil); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusTooManyRequests {
			// A browser gets the page again, saying why, not JSON.
			return true, s.waitPage(c, r, e.Status, func(p *web.WaitPage) { p.OverBudget = true })
		}
		return false, err
	}
	res, err := s.client.Join(c.Request().Context(), v.ID)
	if err != nil {
		return false, err
	}
	s.setTicketCookie(c, v.Config.Slug, res.Ticket)
	return false, nil
}

// handleWait shows a browser without JavaScript where its number stands.
func (s *Server) handleWait(c echo.Context) error {
	r, ok, err := s.waitRoom(c)
	if !ok {
		return err
	}
	return s.waitPage(c, r, http.StatusOK, nil)
}

// waitPage answers the page without JavaScript with status; edit, when
// set, changes the page before it is drawn.
func (s *Server) waitPage(c echo.Context, r *front.Room, status int, edit func(*web.WaitPage)) error {
	v := r.View
	cfg := &v.Config
	lang := s.pageLang(c, cfg.Language)
	p := web.WaitPage{Slug: cfg.Slug, Name: cfg.Name, Message: cfg.MessageIn(lang), Lang: lang,
		Query: c.Request().URL.RawQuery, State: web.WaitTake}
	if n, ok := s.waitTicket(c, r); ok {
		if done, err := s.waitStatus(c, r, n, &p); done || err != nil {
			return err
		}
	}
	s.waitMode(v, lang, &p)
	if edit != nil {
		edit(&p)
	}
	var buf bytes.Buffer
	if err := web.RenderWait(&buf, p); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	return c.HTMLBlob(status, buf.Bytes())
}

// waitTicket is the number of the visitor's ticket cookie; a ticket the
// room does not know is forgotten.
func (s *Server) waitTicket(c echo.Context, r *front.Room) (uint64, bool) {
	ck, err := c.Cookie(ticketCookie)
	if err != nil || ck.Value == "" {
		return 0, false
	}
	n, err := room.ParseTicket(r.TicketKey, r.View.ID, ck.Value)
	if err != nil {
		s.setTicketCookie(c, r.View.Config.Slug, "")
		return 0, false
	}
	return n, true
}

// waitStatus fills p for number n, or forwards the visitor with a token
// when the line has reached them (done).
func (s *Server) waitStatus(c echo.Context, r *front.Room, n uint64, p *web.WaitPage) (done bool, err error) {
	v := r.View
	st := v.StatusOf(n, s.now().UnixNano())
	p.State, p.Number, p.Ahead, p.Serving = web.WaitWaiting, n, st.Ahead, st.Serving
	if st.Drawn {
		p.Position = st.Position
	}
	p.Refresh = min(max(st.RetryAfter, minWaitRefresh), maxWaitRefresh)
	if v.Config.Abandon.Enabled {
		s.views.Seen(v.ID, n) // each reload is the page saying it is still here
	}
	if !st.Admitted || !st.Active || v.Closed() != nil {
		return false, nil
	}
	target := v.Config.TargetURL
	if u, ok := returnurl.Check(c.QueryParam("return"), v.Config.Domains); ok {
		returnurl.StripToken(u)
		target = u.String()
	}
	t, err := s.client.Token(c.Request().Context(), v.ID, n)
	if err != nil {
		return false, nil // shown as waiting; the next reload asks again
	}
	if target == "" {
		p.State, p.Refresh = web.WaitHere, 0
		return false, nil
	}
	s.setTicketCookie(c, v.Config.Slug, "")
	return true, s.redirect(c, returnurl.WithToken(target, t.Token))
}

// waitMode turns p into the page of a closed, paused or proof-of-work
// room where that applies.
func (s *Server) waitMode(v *room.View, lang string, p *web.WaitPage) {
	switch {
	case v.Closed() != nil:
		m, _ := closedModeMessage(v)
		p.State, p.Mode, p.ModeText, p.ModeLink, p.Refresh = web.WaitClosed, v.EffectiveMode(), m.Text(lang), m.LinkURL, maxWaitRefresh
	case v.Paused():
		p.State, p.Refresh = web.WaitPaused, pausedWaitRefresh
	case p.State == web.WaitTake:
		if on, _ := v.PowInForce(); on {
			p.State = web.WaitPow
		}
	}
}
