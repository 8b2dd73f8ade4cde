package web

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// States of the page without JavaScript (WaitPage.State).
const (
	WaitTake    = "take"    // no number yet: the form that draws one
	WaitPow     = "pow"     // the room asks for proof of work, which needs JavaScript
	WaitWaiting = "waiting" // a number, the line not there yet
	WaitPaused  = "paused"  // admission paused
	WaitClosed  = "closed"  // sold out or in maintenance
	WaitHere    = "here"    // the turn has come and there is nowhere to forward to
)

// WaitPage is the waiting page for a browser without JavaScript
// (GET /queue/<slug>/wait): drawn by the server on every refresh, it
// reloads itself with <meta http-equiv="refresh"> and carries no script.
type WaitPage struct {
	Slug, Name, Message string
	Lang                string // one of Languages; anything else renders English
	Query               string // the request's raw query, kept in the links
	State               string // one of the Wait… states
	Number, Position    uint64 // the visitor's number, and place after a draw (0: none)
	Ahead, Serving      uint64
	Refresh             int    // seconds until the page reloads; 0: it does not
	Mode                string // soldOut or maintenance in WaitClosed
	ModeText, ModeLink  string // the operator's words in a closed mode
	OverBudget          bool   // WaitTake: the last try was refused, the address over its budget
}

type waitView struct {
	WaitPage
	Dir, StateText, CSSURL, FormURL, SelfURL, RefreshNote string
	T                                                     messages
	Banner                                                banner
	Languages                                             []langLink
}

var waitTemplate = template.Must(template.New("wait.html").ParseFS(files, "templates/wait.html", "templates/room.html"))

// RenderWait writes the page without JavaScript for p to w; it writes
// nothing when it fails.
func RenderWait(w io.Writer, p WaitPage) error {
	lang, t := words(p.Lang)
	p.Lang = lang
	if strings.TrimSpace(p.Name) == "" {
		p.Name = t.Title
	}
	self := "/queue/" + url.PathEscape(p.Slug) + "/wait"
	q, _ := url.ParseQuery(p.Query)
	q.Del("ticket")
	q.Del("lang")
	if len(q) > 0 {
		self += "?" + q.Encode()
	}
	v := waitView{WaitPage: p, Dir: dir(lang), T: t, CSSURL: assetURL("", "room.css"),
		FormURL: self, SelfURL: self, Languages: langLinks(lang, q.Encode())}
	v.RefreshNote = fill(t.RefreshNote, "n", strconv.Itoa(p.Refresh))
	v.StateText, v.Banner = waitWords(p, t)
	var buf bytes.Buffer
	if err := waitTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("render the page without JavaScript for %q: %w", p.Slug, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// waitWords are the state line and banner of p.
func waitWords(p WaitPage, t messages) (string, banner) {
	switch p.State {
	case WaitPow:
		return t.Verifying, banner{Text: t.NoScriptPow}
	case WaitPaused:
		if p.Number > 0 {
			return t.Paused, banner{Text: t.PausedDefault}
		}
		return t.Paused, banner{Text: t.PausedJoin}
	case WaitClosed:
		if p.Mode == "soldOut" {
			return t.SoldOut, banner{t.SoldOutDefault, p.ModeText, httpLink(p.ModeLink)}
		}
		return t.Maintenance, banner{t.MaintenanceDefault, p.ModeText, httpLink(p.ModeLink)}
	case WaitHere:
		return t.Admitted, banner{}
	case WaitWaiting:
		return t.Waiting, banner{}
	case WaitTake:
		if p.OverBudget {
			return t.Title, banner{Text: t.OverBudget}
		}
	}
	return t.Title, banner{}
}

// fill replaces {key} in s with value, as i18n.js does on the page.
func fill(s, key, value string) string {
	return strings.ReplaceAll(s, "{"+key+"}", value)
}
