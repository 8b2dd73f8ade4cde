// Command preview serves the waiting room's front end — the page, embed.js
// and the static assets, rendered by package web exactly as the server
// renders them — in front of any backend that speaks the visitor and admin
// API, and passes every other request (API calls, WebSocket) through to it.
// The browser tests use it with a small stand-in backend to exercise the
// front end on its own; it also makes the page easy to look at.
//
//	preview -addr 127.0.0.1:8090 -backend http://127.0.0.1:8091 -admin-token T
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/transport/returnurl"
	"github.com/aditus-queue/aditus-queue/transport/web"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	backend := flag.String("backend", "", "base URL of the API backend")
	token := flag.String("admin-token", "", "admin token for reading room configurations from the backend")
	public := flag.String("public-url", "", "public base URL of this server (default http://<addr>)")
	flag.Parse()
	target, err := url.Parse(*backend)
	if err != nil || target.Host == "" {
		fmt.Fprintln(os.Stderr, "preview: -backend must be an absolute URL")
		os.Exit(2)
	}
	if *public == "" {
		*public = "http://" + *addr
	}
	p := &preview{
		backend: strings.TrimRight(*backend, "/"),
		token:   *token,
		public:  strings.TrimRight(*public, "/"),
		proxy:   httputil.NewSingleHostReverseProxy(target),
		client:  &http.Client{Timeout: 5 * time.Second},
	}
	srv := &http.Server{Addr: *addr, Handler: p, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("preview: serving on %s, backend %s", p.public, p.backend)
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "preview:", err)
		os.Exit(1)
	}
}

type preview struct {
	backend, token, public string
	proxy                  *httputil.ReverseProxy
	client                 *http.Client
}

// site is the part of the admin API's site object the page needs.
type site struct {
	Slug           string   `json:"slug"`
	Name           string   `json:"name"`
	Message        string   `json:"message"`
	HeaderImageURL string   `json:"headerImageUrl"`
	AccentColor    string   `json:"accentColor"`
	Domains        []string `json:"domains"`
	Pow            struct {
		Enabled bool `json:"enabled"`
		Bits    int  `json:"bits"`
	} `json:"pow"`
}

func (p *preview) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if strings.HasPrefix(path, web.AssetsPrefix) {
		web.Assets().ServeHTTP(w, r)
		return
	}
	rest, ok := strings.CutPrefix(path, "/queue/")
	if !ok || r.Method != http.MethodGet {
		p.proxy.ServeHTTP(w, r)
		return
	}
	slug, sub, _ := strings.Cut(rest, "/")
	switch {
	case sub == "" && slug != "" && slug != "healthz":
		p.servePage(w, r, slug)
	case sub == "embed.js":
		var buf bytes.Buffer
		if err := web.RenderEmbed(&buf, web.Embed{Slug: slug, BaseURL: p.public}); err != nil {
			http.Error(w, "embed failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Write(buf.Bytes())
	default:
		p.proxy.ServeHTTP(w, r)
	}
}

// servePage renders the waiting room the way the server's page handler
// does: language from Accept-Language, the return URL checked against the
// room's domains and stripped of a stale token, 404 for an unknown room.
func (p *preview) servePage(w http.ResponseWriter, r *http.Request, slug string) {
	s, found, err := p.site(r.Context(), slug)
	if err != nil {
		http.Error(w, "backend unavailable", http.StatusBadGateway)
		return
	}
	page := web.RoomPage{Slug: slug, Lang: web.Lang(r.Header.Get("Accept-Language")), BaseURL: p.public, Found: found}
	if found {
		page.Name, page.Message = s.Name, s.Message
		page.HeaderImageURL, page.AccentColor = s.HeaderImageURL, s.AccentColor
		page.PowEnabled, page.PowBits = s.Pow.Enabled, s.Pow.Bits
		if u, ok := returnurl.Check(r.URL.Query().Get("return"), s.Domains); ok {
			returnurl.StripToken(u)
			page.ReturnURL = u.String()
		}
	}
	var buf bytes.Buffer
	if err := web.RenderRoom(&buf, page); err != nil {
		http.Error(w, "render failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept-Language")
	if !found {
		w.WriteHeader(http.StatusNotFound)
	}
	w.Write(buf.Bytes())
}

func (p *preview) site(ctx context.Context, slug string) (site, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.backend+"/api/admin/queue/sites", nil)
	if err != nil {
		return site{}, false, err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	res, err := p.client.Do(req)
	if err != nil {
		return site{}, false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return site{}, false, fmt.Errorf("list sites: status %d", res.StatusCode)
	}
	var body struct {
		Sites []site `json:"sites"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return site{}, false, fmt.Errorf("list sites: %w", err)
	}
	for _, s := range body.Sites {
		if s.Slug == slug {
			return s, true, nil
		}
	}
	return site{}, false, nil
}
