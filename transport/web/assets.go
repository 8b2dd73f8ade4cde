// Package web is the visitor-facing front end of the waiting room: the
// hosted waiting-room page, the shop-side embed.js and the static files they
// load. Everything is plain HTML, CSS and JavaScript embedded in the binary;
// the server calls RenderRoom, RenderEmbed and Assets from its handlers.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// AssetsPrefix is the URL path under which Assets serves the static files.
// The slug "assets" is therefore reserved.
const AssetsPrefix = "/queue/assets/"

//go:embed templates static
var files embed.FS

// asset is one static file with its content hash, computed once at start.
type asset struct {
	body        []byte
	contentType string
	version     string // first 16 hex digits of the SHA-256 of body
}

var assets = loadAssets()

func loadAssets() map[string]asset {
	m := map[string]asset{}
	entries, err := fs.ReadDir(files, "static")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		body, err := files.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(e.Name()))
		switch path.Ext(e.Name()) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		}
		m[e.Name()] = asset{body: body, contentType: ct, version: hex.EncodeToString(sum[:8])}
	}
	return m
}

// assetURL is the versioned URL of a static file, relative to base.
func assetURL(base, name string) string {
	return base + AssetsPrefix + name + "?v=" + assets[name].version
}

// Assets serves the static files (room.css, room.js, pow-worker.js) for
// GET and HEAD requests whose path starts with AssetsPrefix; the server
// mounts it at GET /queue/assets/*. A request carrying the file's current
// version (?v=…, as the rendered pages link it) may be cached for a year;
// an unversioned one for five minutes. ETag and If-None-Match work either
// way. Anything else answers 404, other methods 405.
func Assets() http.Handler {
	return http.HandlerFunc(serveAsset)
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, AssetsPrefix)
	a, found := assets[name]
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+a.version+`"`)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}
