package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// DefaultAccentColor colours the progress bar and the live indicator when a
// room has no accent colour of its own.
const DefaultAccentColor = "#0a63c9"

// RoomPage is what the hosted waiting-room page (GET /queue/<slug>) shows.
// The server fills it from the room's configuration and the request; every
// field is rendered escaped, so none needs to be trusted.
type RoomPage struct {
	Slug           string   // the room's slug, as in the URL
	Name           string   // display name, the page title; "Waiting room" when empty
	Message        string   // plain text below the title, line breaks kept
	HeaderImageURL string   // https URL of the landscape key visual; dropped unless https (or http on a loopback host)
	AccentColor    string   // "#rrggbb"; DefaultAccentColor when empty or malformed
	Lang           string   // one of Languages (see PageLang); anything else renders English
	Query          string   // the request's raw query, kept in the language switch's links
	BaseURL        string   // the server's public URL, without trailing slash; "" means the page's own origin
	ReturnURL      string   // a return URL already passed through returnurl.Check and StripToken, or ""
	Found          bool     // false renders the "waiting room not found" page; the server answers it with 404
	PowEnabled     bool     // the room asks for proof of work before a number is issued
	PowBits        int      // the room's proof-of-work difficulty, for display of the verifying state only
	Domains        []string // the room's shop domains, the only pages besides its own that may frame it
	Number         uint64   // the visitor's number when the address carries their ticket; 0 otherwise
	Ticket         string   // that ticket, handed on to the page without JavaScript
	// Mode is the room's mode; in soldOut and maintenance the page opens
	// with ModeText (the operator's message in the page's language, see
	// ModeMessage.Text) and ModeLink under the page's own sentence.
	Mode     string
	ModeText string
	ModeLink string
	Paused   bool // the room is paused: the page opens saying so
}

var (
	roomTemplate = template.Must(template.New("room.html").ParseFS(files, "templates/room.html"))
	hexColor     = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
)

// roomView is the template's data: RoomPage after validation, plus the
// strings and URLs derived from it.
type roomView struct {
	Lang        string
	Dir         string // ltr or rtl
	T           messages
	Found       bool
	Name        string
	Message     string
	HeaderImage string
	AccentStyle template.CSS
	CSP         string
	CSSURL      string
	JSURL       string   // room.js, the page's ES module
	Preloads    []string // the modules room.js imports, preloaded with it
	FallbackURL string   // nomodule.js, for browsers without modules
	Initial     string
	Number      uint64
	Banner      banner
	NoJSURL     string // the page without JavaScript (POST draws a number)
	Languages   []langLink
	Data        roomData
}

// banner is the notice the page opens with: a closed mode's or a pause's
// sentence, the operator's words and their link.
type banner struct {
	Text, Detail, Link string
}

// langLink is one entry of the page's language switch.
type langLink struct {
	Lang, Name, URL string
	Current         bool
}

// roomData is the JSON block the page's scripts read from <script id="aq-room">.
type roomData struct {
	Slug      string   `json:"slug"`
	Name      string   `json:"name"`
	Base      string   `json:"base"`
	ReturnURL string   `json:"returnUrl"`
	Lang      string   `json:"lang"`
	Pow       powData  `json:"pow"`
	WorkerURL string   `json:"workerUrl"`
	I18n      messages `json:"i18n"`
	// Mode and ModeMessage are the room's mode and its operator's words
	// as the page opens, until the first answer says more.
	Mode        string       `json:"mode"`
	ModeMessage *modeMessage `json:"modeMessage,omitempty"`
	// Number is the number of the ticket in the page's address, already
	// shown in the HTML; 0 without one.
	Number uint64 `json:"number,omitempty"`
}

type modeMessage struct {
	Text    string `json:"text,omitempty"`
	LinkURL string `json:"linkUrl,omitempty"`
}

type powData struct {
	Enabled bool `json:"enabled"`
	Bits    int  `json:"bits"`
}

// RenderRoom writes the waiting-room page for p to w, or the "waiting room
// not found" page when p.Found is false. It writes nothing when it fails.
func RenderRoom(w io.Writer, p RoomPage) error {
	lang, t := words(p.Lang)
	base, image, style := p.parts()
	name := strings.TrimSpace(p.Name)
	if name == "" {
		name = t.Title
	}
	if !p.Found {
		name = t.NotFoundTitle
	}

	v := roomView{
		Lang:        lang,
		Dir:         dir(lang),
		T:           t,
		Found:       p.Found,
		Name:        name,
		Message:     strings.TrimSpace(p.Message),
		HeaderImage: image,
		AccentStyle: template.CSS(style), // built from a validated #rrggbb only
		CSP:         contentSecurityPolicy(base, image, style),
		CSSURL:      assetURL(base, "room.css"),
		JSURL:       assetURL(base, "room.js"),
		Preloads:    preloads(base),
		FallbackURL: assetURL(base, "nomodule.js"),
		Initial:     t.Joining,
		Number:      p.Number,
		NoJSURL:     base + "/queue/" + url.PathEscape(p.Slug) + "/wait" + waitQuery(p.ReturnURL, p.Ticket),
		Languages:   langLinks(lang, p.Query),
		Data: roomData{
			Slug:      p.Slug,
			Name:      name,
			Base:      base,
			ReturnURL: p.ReturnURL,
			Lang:      lang,
			Pow:       powData{Enabled: p.PowEnabled, Bits: p.PowBits},
			WorkerURL: assetURL(base, "pow-worker.js"),
			I18n:      t,
			Mode:      p.Mode,
			Number:    p.Number,
		},
	}
	if p.PowEnabled {
		v.Initial = t.Verifying
	}
	v.opening(p, t)
	if !p.Found {
		v.Message = ""
		v.HeaderImage = ""
	}
	var buf bytes.Buffer
	if err := roomTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("render waiting room %q: %w", p.Slug, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// preloads are the versioned URLs of the modules room.js imports.
func preloads(base string) []string {
	var out []string
	for _, m := range moduleGraph("room.js") {
		out = append(out, assetURL(base, m))
	}
	return out
}

// opening sets the state line and banner the page opens with for a room
// that is closed or paused, so that they are in the served HTML and not
// only after a script has run.
func (v *roomView) opening(p RoomPage, t messages) {
	link := httpLink(p.ModeLink)
	switch {
	case p.Mode == "soldOut":
		v.Initial, v.Banner = t.SoldOut, banner{t.SoldOutDefault, p.ModeText, link}
	case p.Mode == "maintenance":
		v.Initial, v.Banner = t.Maintenance, banner{t.MaintenanceDefault, p.ModeText, link}
	case p.Paused:
		v.Initial, v.Banner = t.Paused, banner{Text: t.PausedJoin}
	default:
		return
	}
	if p.ModeText != "" || link != "" {
		v.Data.ModeMessage = &modeMessage{Text: p.ModeText, LinkURL: link}
	}
}

// httpLink is raw when it is an http or https URL, "" otherwise.
func httpLink(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	return u.String()
}

// waitQuery is the query of the page without JavaScript: the return URL
// and the ticket the page was handed, where there are.
func waitQuery(ret, ticket string) string {
	q := url.Values{}
	if ret != "" {
		q.Set("return", ret)
	}
	if ticket != "" {
		q.Set("ticket", ticket)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// langLinks are the language switch's entries: the page's own address
// (query as given, less any lang and ticket) with lang set to each language.
func langLinks(current, rawQuery string) []langLink {
	q, _ := url.ParseQuery(rawQuery)
	q.Del("ticket") // the page keeps it; the switch need not carry it
	out := make([]langLink, 0, len(Languages))
	for _, l := range Languages {
		q.Set("lang", l)
		out = append(out, langLink{Lang: l, Name: languageNames[l], URL: "?" + q.Encode(), Current: l == current})
	}
	return out
}

// parts are the page's base URL, header image and accent style block, as
// it renders and as its policy allows them.
func (p RoomPage) parts() (base, image, style string) {
	accent := p.AccentColor
	if !hexColor.MatchString(accent) {
		accent = DefaultAccentColor
	}
	accent = strings.ToLower(accent)
	style = fmt.Sprintf(":root{--aq-accent:%s;--aq-accent-ink:%s}", accent, accentInk(accent))
	return strings.TrimRight(p.BaseURL, "/"), headerImage(p.HeaderImageURL), style
}

// ContentSecurityPolicy is the policy to send as a header with the page:
// the one its meta element carries, plus frame-ancestors (which a meta
// element cannot carry) limited to the page's own origin and the room's
// shop domains, so no other site can frame the page and its ticket.
func (p RoomPage) ContentSecurityPolicy() string {
	base, image, style := p.parts()
	return contentSecurityPolicy(base, image, style) + "; " + frameAncestors(p.Domains)
}

// frameAncestors allows 'self' and https pages of domains (any port for a
// loopback host, http too); entries that are not plain host names, or
// "*." wildcards of one, are left out.
func frameAncestors(domains []string) string {
	out := []string{"frame-ancestors 'self'"}
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(d), "."))
		if !frameHost.MatchString(d) {
			continue
		}
		if d == "localhost" || d == "127.0.0.1" {
			out = append(out, "http://"+d+":*", "https://"+d+":*")
			continue
		}
		out = append(out, "https://"+d)
	}
	return strings.Join(out, " ")
}

var frameHost = regexp.MustCompile(`^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// headerImage returns raw when it is an absolute https URL (or http on a
// loopback host, for local set-ups), "" otherwise.
func headerImage(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil {
		return ""
	}
	switch u.Scheme {
	case "https":
	case "http":
		if h := u.Hostname(); h != "localhost" && h != "127.0.0.1" && h != "::1" {
			return ""
		}
	default:
		return ""
	}
	return u.String()
}

// contentSecurityPolicy allows the page exactly what it loads: its own
// assets and API calls (at base, or the page's origin), the header image's
// origin and the one inline style block that carries the accent colour.
func contentSecurityPolicy(base, image, style string) string {
	self := "'self'"
	connect := "'self'"
	if u, err := url.Parse(base); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		origin := u.Scheme + "://" + u.Host
		ws := "wss://" + u.Host
		if u.Scheme == "http" {
			ws = "ws://" + u.Host
		}
		self += " " + origin
		connect += " " + origin + " " + ws
	}
	img := self + " data:"
	if u, err := url.Parse(image); err == nil && u.Host != "" {
		img += " " + u.Scheme + "://" + u.Host
	}
	sum := sha256.Sum256([]byte(style))
	styleHash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + self,
		"style-src " + self + " " + styleHash,
		"img-src " + img,
		"connect-src " + connect,
		"worker-src " + self,
		"base-uri 'none'",
		"form-action " + self,
	}, "; ")
}

// accentInk returns a colour for text and thin marks drawn in the accent:
// the accent itself when it reaches 4.5:1 against white (WCAG AA for body
// text), otherwise the accent darkened just enough to reach it, so a pale
// brand colour still yields readable text.
func accentInk(hex string) string {
	r, g, b := parseHex(hex)
	for f := 1.0; f > 0; f -= 0.02 {
		rr, gg, bb := r*f, g*f, b*f
		if contrastOnWhite(rr, gg, bb) >= 4.5 {
			return fmt.Sprintf("#%02x%02x%02x", int(math.Round(rr)), int(math.Round(gg)), int(math.Round(bb)))
		}
	}
	return "#000000"
}

func parseHex(hex string) (r, g, b float64) {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	return float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v & 0xff)
}

func contrastOnWhite(r, g, b float64) float64 {
	lum := func(c float64) float64 {
		c /= 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	l := 0.2126*lum(r) + 0.7152*lum(g) + 0.0722*lum(b)
	return 1.05 / (l + 0.05)
}
