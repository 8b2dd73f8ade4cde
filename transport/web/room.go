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
	Lang           string   // "de" or "en" (see Lang); anything else renders English
	BaseURL        string   // the server's public URL, without trailing slash; "" means the page's own origin
	ReturnURL      string   // a return URL already passed through returnurl.Check and StripToken, or ""
	Found          bool     // false renders the "waiting room not found" page; the server answers it with 404
	PowEnabled     bool     // the room asks for proof of work before a number is issued
	PowBits        int      // the room's proof-of-work difficulty, for display of the verifying state only
	Domains        []string // the room's shop domains, the only pages besides its own that may frame it
}

var (
	roomTemplate = template.Must(template.New("room.html").ParseFS(files, "templates/room.html"))
	hexColor     = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
)

// roomView is the template's data: RoomPage after validation, plus the
// strings and URLs derived from it.
type roomView struct {
	Lang        string
	T           messages
	Found       bool
	Name        string
	Message     string
	HeaderImage string
	AccentStyle template.CSS
	CSP         string
	CSSURL      string
	JSURL       string // room.js, the page's ES module
	FallbackURL string // nomodule.js, for browsers without modules
	Initial     string
	Data        roomData
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
}

type powData struct {
	Enabled bool `json:"enabled"`
	Bits    int  `json:"bits"`
}

// RenderRoom writes the waiting-room page for p to w, or the "waiting room
// not found" page when p.Found is false. It writes nothing when it fails.
func RenderRoom(w io.Writer, p RoomPage) error {
	lang := p.Lang
	if _, ok := catalog[lang]; !ok {
		lang = "en"
	}
	t := catalog[lang]
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
		T:           t,
		Found:       p.Found,
		Name:        name,
		Message:     strings.TrimSpace(p.Message),
		HeaderImage: image,
		AccentStyle: template.CSS(style), // built from a validated #rrggbb only
		CSP:         contentSecurityPolicy(base, image, style),
		CSSURL:      assetURL(base, "room.css"),
		JSURL:       assetURL(base, "room.js"),
		FallbackURL: assetURL(base, "nomodule.js"),
		Initial:     t.Joining,
		Data: roomData{
			Slug:      p.Slug,
			Name:      name,
			Base:      base,
			ReturnURL: p.ReturnURL,
			Lang:      lang,
			Pow:       powData{Enabled: p.PowEnabled, Bits: p.PowBits},
			WorkerURL: assetURL(base, "pow-worker.js"),
			I18n:      t,
		},
	}
	if p.PowEnabled {
		v.Initial = t.Verifying
	}
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
		"form-action 'none'",
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
