// Package dashboard is the operator console: plain HTML, CSS and JavaScript
// embedded in the binary and served at /admin/ by every front node. The
// console talks only to the admin API (/api/admin/queue/…) and the visitor
// info endpoint with the operator's bearer token, which it keeps in the
// browser's sessionStorage and never puts in a URL. The live socket and the
// instances endpoint it reads are served by the subpackages.
package dashboard

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/transport/web"
)

//go:embed static
var files embed.FS

// CSP is the console's Content-Security-Policy: scripts, styles and
// connections only from this origin (the live socket included), no inline
// script or style, no framing, no plugins. The console sets every value
// with textContent, so nothing an operator or visitor typed runs as code.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Console serves the operator console.
type Console struct {
	static fs.FS
	// pages holds index.html rendered once per language.
	pages map[string][]byte
}

// Config wires the console.
type Config struct {
	// PublicURL is the base of the links the server hands out (no trailing
	// slash); the integration snippets are filled in with it.
	PublicURL string
}

// New renders the console's page for every language.
func New(cfg Config) (*Console, error) {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		return nil, err
	}
	tpl, err := template.ParseFS(sub, "index.html")
	if err != nil {
		return nil, err
	}
	c := &Console{static: sub, pages: map[string][]byte{}}
	for _, lang := range []string{"de", "en"} {
		var b bytes.Buffer
		if err := tpl.Execute(&b, map[string]string{"Lang": lang, "PublicURL": cfg.PublicURL}); err != nil {
			return nil, err
		}
		c.pages[lang] = b.Bytes()
	}
	return c, nil
}

// Register adds GET and HEAD of /admin, /admin/ and /admin/<asset> to e
// (HEAD for monitors and link checkers; net/http drops the body).
func (c *Console) Register(e *echo.Echo) {
	methods := []string{http.MethodGet, http.MethodHead}
	e.Match(methods, "/admin", func(ctx echo.Context) error {
		return ctx.Redirect(http.StatusMovedPermanently, "/admin/")
	})
	e.Match(methods, "/admin/", c.handleIndex)
	e.Match(methods, "/admin/*", c.handleAsset)
}

// handleIndex answers the console page in the language the browser prefers
// (German or English, as the waiting page chooses); the page's own switch
// overrides it.
func (c *Console) handleIndex(ctx echo.Context) error {
	h := ctx.Response().Header()
	securityHeaders(h)
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept-Language")
	return ctx.Blob(http.StatusOK, "text/html; charset=utf-8", c.pages[web.Lang(ctx.Request().Header.Get("Accept-Language"))])
}

// handleAsset answers one embedded file; anything else is 404.
func (c *Console) handleAsset(ctx echo.Context) error {
	name := ctx.Param("*")
	if name == "" || name == "index.html" || strings.Contains(name, "..") {
		return echo.ErrNotFound
	}
	body, err := fs.ReadFile(c.static, name)
	if err != nil {
		return echo.ErrNotFound
	}
	h := ctx.Response().Header()
	securityHeaders(h)
	// Assets are small and change with every release; revalidation keeps
	// an upgraded node from serving a stale mix.
	h.Set("Cache-Control", "no-cache")
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	return ctx.Blob(http.StatusOK, ct, body)
}

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}
