package api

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/web"
)

// appState is the JSON answer of GET /queue/<slug> and GET /enter for apps
// and API clients that cannot read the hosted page (the AppState schema of
// openapi.json). It says what the page would show: every listed field is
// present, null where the page would show nothing.
type appState struct {
	// State is waiting, admitted, prequeue, paused, soldOut or maintenance.
	State                string  `json:"state"`
	Mode                 string  `json:"mode"`
	Position             *uint64 `json:"position"`
	Ahead                *uint64 `json:"ahead"`
	EstimatedWaitSeconds *int    `json:"estimatedWaitSeconds"`
	// RefreshSeconds is when asking again is worth it (also Retry-After).
	RefreshSeconds int     `json:"refreshSeconds"`
	Ticket         *string `json:"ticket"`
	// Message is the text the page shows under the title: the room's
	// message, or the mode's sentence and the operator's words.
	Message string   `json:"message"`
	Event   appEvent `json:"event"`
	// Token and TargetURL come once the visitor is admitted.
	Token     string `json:"token,omitempty"`
	TargetURL string `json:"targetUrl,omitempty"`
}

// appEvent is what the visitor waits for: the room's name and opening.
type appEvent struct {
	Name    string     `json:"name"`
	OpensAt *time.Time `json:"opensAt"`
}

// wantsJSON reports whether the request's Accept names application/json
// before (or without) text/html: an app, not a browser.
func wantsJSON(c echo.Context) bool {
	for _, part := range strings.Split(c.Request().Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case echo.MIMEApplicationJSON:
			return true
		case echo.MIMETextHTML:
			return false
		}
	}
	return false
}

// handleAppState answers the page's question in JSON: with ?ticket=, where
// that ticket stands; without, it takes a number as the page does.
func (s *Server) handleAppState(c echo.Context, r *front.Room) error {
	varyNoStore(c)
	v := r.View
	lang := web.PageLang("", v.Config.Language, c.Request().Header.Get("Accept-Language"))
	a := appState{Mode: v.EffectiveMode(), Message: v.Config.MessageIn(lang), Event: eventOf(v)}
	waiting := v.Config.WaitingStatus
	if waiting == 0 {
		waiting = http.StatusOK
	}
	if e := closedError(v); e != nil {
		a.State, a.Message, a.RefreshSeconds = a.Mode, closedMessage(v, lang), 60
		if e.RetryAfter > 0 {
			a.RefreshSeconds = e.RetryAfter
		}
		return s.writeAppState(c, e.Status, &a)
	}
	ticket := c.QueryParam("ticket")
	var n uint64
	if ticket != "" {
		var err error
		if n, err = s.number(r, ticket, "", false); err != nil {
			return err
		}
	} else {
		if v.Paused() {
			a.State, a.RefreshSeconds = "paused", 10
			return s.writeAppState(c, waiting, &a)
		}
		if err := s.admitJoin(c, r, nil); err != nil {
			// 428 with a challenge (join with POST /join and the proof), or
			// 429 for an address over its budget.
			return err
		}
		res, err := s.client.Join(c.Request().Context(), v.ID)
		if err != nil {
			return err
		}
		v, n, ticket = &res.View, res.Number, res.Ticket
	}
	return s.appStanding(c, v, n, ticket, lang, waiting, &a)
}

// appStanding answers where ticket (number n) stands in v: admitted with
// its token, or still waiting, paused or in the pre-queue.
func (s *Server) appStanding(c echo.Context, v *room.View, n uint64, ticket, lang string, waiting int, a *appState) error {
	st := v.StatusOf(n, s.now().UnixNano())
	a.Ticket, a.Position, a.Ahead = &ticket, &st.Position, &st.Ahead
	a.EstimatedWaitSeconds, a.RefreshSeconds = &st.EstimatedWait, st.RetryAfter
	switch {
	case st.Admitted:
		a.State = "admitted"
		t, err := s.client.Token(c.Request().Context(), v.ID, n)
		if err != nil {
			return err
		}
		a.Token, a.TargetURL = t.Token, t.TargetURL
		return s.writeAppState(c, http.StatusOK, a)
	case !st.Active:
		a.State = "paused"
	case st.PreQueue:
		a.State = "prequeue"
	default:
		a.State = "waiting"
	}
	if a.Mode == room.ModeQueueAll {
		a.Message = web.ModeSentence(lang, a.Mode)
	}
	return s.writeAppState(c, waiting, a)
}

// varyNoStore marks an answer that depends on Accept and must not be kept.
func varyNoStore(c echo.Context) {
	h := c.Response().Header()
	h.Add("Vary", "Accept")
	h.Set("Cache-Control", "no-store")
}

// appBypass is the JSON answer of /enter for a valid bypass code: admitted
// at once, with the bypass token and where to take it.
func (s *Server) appBypass(c echo.Context, r *front.Room, token, target string) error {
	varyNoStore(c)
	v := r.View
	a := appState{State: "admitted", Mode: v.EffectiveMode(), Message: v.Config.Message, Event: eventOf(v),
		Token: token, TargetURL: target}
	return s.writeAppState(c, http.StatusOK, &a)
}

// writeAppState sends a with status. The address may carry the ticket,
// as the page's does: never a referrer, never framed.
func (s *Server) writeAppState(c echo.Context, status int, a *appState) error {
	h := c.Response().Header()
	h.Set("Retry-After", strconv.Itoa(a.RefreshSeconds))
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	return c.JSON(status, a)
}

func eventOf(v *room.View) appEvent {
	e := appEvent{Name: v.Config.Name}
	if v.Config.OpensAt != nil {
		t := v.Config.OpensAt.UTC()
		e.OpensAt = &t
	}
	return e
}

// closedMessage is the page's sentence for a closed room followed by the
// operator's words in lang (with ModeMessage.Text's fallback).
func closedMessage(v *room.View, lang string) string {
	m, _ := closedModeMessage(v)
	words := m.Text(lang)
	out := web.ModeSentence(lang, v.EffectiveMode())
	if words != "" {
		out += "\n" + words
	}
	if m.LinkURL != "" {
		out += "\n" + m.LinkURL
	}
	return out
}
