// Package web is the visitor-facing front end of the waiting room: the
// hosted waiting-room page, the shop-side embed.js and the static files they
// load. Everything is plain HTML, CSS and JavaScript embedded in the binary;
// the server calls RenderRoom, RenderEmbed and Assets from its handlers.
//
// The page's script is a set of ES modules with no build step: room.js (the
// flow) imports connection.js (socket and polling), render.js (the view),
// state.js (the state and what follows from it), i18n.js (words and
// figures), pow.js (proof of work), turn.js (the turn told to a background
// tab) and http.js (calls to the queue, shared with embed.js). nomodule.js speaks to browsers without modules.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// AssetsPrefix is the URL path under which Assets serves the static files.
// The slug "assets" is therefore reserved.
const AssetsPrefix = "/queue/assets/"

//go:embed templates static i18n
var files embed.FS

// asset is one static file with its content hash, computed once at start.
type asset struct {
	body        []byte
	contentType string
	version     string   // first 16 hex digits of the SHA-256 of body
	imports     []string // the sibling modules it imports
}

var assets = loadAssets()

// PowWorker is the proof-of-work solver the waiting page runs in a worker
// (static/pow-worker.js), for pages served elsewhere: the capacity proxy's
// challenge page runs it from a Blob.
func PowWorker() []byte { return assets["pow-worker.js"].body }

// moduleImport matches an ES module's import of a sibling file, the one
// form the page's modules use: import { … } from './name.js';
var moduleImport = regexp.MustCompile(`(?m)^(import [^;\n]* from '\./)([\w-]+\.js)(';)$`)

func loadAssets() map[string]asset {
	entries, err := fs.ReadDir(files, "static")
	if err != nil {
		panic(err)
	}
	raw := map[string][]byte{}
	for _, e := range entries {
		body, err := files.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		raw[e.Name()] = body
	}
	m := map[string]asset{}
	for name := range raw {
		if err := loadAsset(m, raw, name, nil); err != nil {
			panic(err)
		}
	}
	return m
}

// loadAsset adds name to m, after the files it imports. Each import of a
// sibling module names that module's version (./http.<version>.js, see
// versionedName), so a module's version
// changes with any file below it and the whole set can be cached for a
// year: a page never runs a new room.js against an old render.js from
// the cache. ES modules have no build step here; this rewrite at start is
// the only change between the file in the repository and the one served.
func loadAsset(m map[string]asset, raw map[string][]byte, name string, chain []string) error {
	if _, done := m[name]; done {
		return nil
	}
	if slices.Contains(chain, name) {
		return fmt.Errorf("static/%s: import cycle %v", name, append(chain, name))
	}
	body, ok := raw[name]
	if !ok {
		return fmt.Errorf("static/%s: imported by static/%s, not found", name, chain[len(chain)-1])
	}
	chain = append(chain, name)
	var failed error
	var imports []string
	body = moduleImport.ReplaceAllFunc(body, func(line []byte) []byte {
		g := moduleImport.FindSubmatch(line)
		dep := string(g[2])
		imports = append(imports, dep)
		if err := loadAsset(m, raw, dep, chain); err != nil {
			failed = err
			return line
		}
		return slices.Concat(g[1], []byte(versionedName(dep, m[dep].version)), g[3])
	})
	if failed != nil {
		return failed
	}
	sum := sha256.Sum256(body)
	ct := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	}
	m[name] = asset{body: body, contentType: ct, version: hex.EncodeToString(sum[:8]), imports: imports}
	return nil
}

// moduleGraph lists the modules name imports, directly or through
// others, each once: what the page preloads beside room.js, so that the
// browser fetches them all at once instead of one level of imports after
// the other.
func moduleGraph(name string) []string {
	var out []string
	var walk func(string)
	walk = func(n string) {
		for _, dep := range assets[n].imports {
			if !slices.Contains(out, dep) {
				out = append(out, dep)
				walk(dep)
			}
		}
	}
	walk(name)
	return out
}

// assetURL is the versioned URL of a static file, relative to base.
func assetURL(base, name string) string {
	return base + AssetsPrefix + versionedName(name, assets[name].version)
}

// versionedName carries version in the file's name, before its
// extension: room.js at version 0123456789abcdef is
// room.0123456789abcdef.js.
func versionedName(name, version string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + version + ext
}

var versioned = regexp.MustCompile(`^([\w-]+)\.([0-9a-f]{16})(\.[a-z]+)$`)

// lookupAsset finds the file a request names: its plain name, or its
// versioned name (current reports whether that version is the file's own).
func lookupAsset(name string) (a asset, current, found bool) {
	if a, found = assets[name]; found {
		return a, false, true
	}
	g := versioned.FindStringSubmatch(name)
	if g == nil {
		return asset{}, false, false
	}
	a, found = assets[g[1]+g[3]]
	return a, found && a.version == g[2], found
}

// Assets serves the static files (room.css, the page's ES modules with
// room.js first, nomodule.js, pow-worker.js) for GET and HEAD requests
// whose path starts with AssetsPrefix; the server
// mounts it at GET /queue/assets/*. A request naming the file's current
// version (room.<version>.js, as the rendered pages link it; ?v=<version>
// as they did before) may be cached for a year; an unversioned one, or one
// naming another version, for five minutes. ETag and If-None-Match work either
// way. Anything else answers 404, other methods 405. Any origin may load
// them: a module script from another origin than the page's (a page with
// RoomPage.BaseURL elsewhere) is fetched with CORS, and the files are the
// same public text for everyone.
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
	a, current, found := lookupAsset(name)
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("ETag", `"`+a.version+`"`)
	if current || r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}
