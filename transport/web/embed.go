package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/template"
)

// Embed configures the shop-side script served at GET /queue/<slug>/embed.js.
type Embed struct {
	Slug    string // the room's slug
	BaseURL string // the server's public URL, without trailing slash
}

// embedTemplate is plain JavaScript with two insertion points: the
// configuration object, filled with JSON only (see RenderEmbed), and the
// functions it shares with the waiting page (embedShared).
var embedTemplate = template.Must(template.New("embed.js").ParseFS(files, "templates/embed.js"))

// embedShared is static/http.js, the page's module for calls to the queue,
// as a classic script's text: the shop's page loads embed.js with a plain
// script tag, so its copy of the module cannot export. http.js promises
// only "export function" declarations at the start of a line.
var embedShared = regexp.MustCompile(`(?m)^export function `).ReplaceAllString(string(assets["http.js"].body), "function ")

// RenderEmbed writes the shop-side script for e to w. The slug and base URL
// enter the script only as a JSON object literal, encoded with HTML escaping
// (<, >, & and U+2028/U+2029 as \u escapes), so no value can end the string,
// the script or an enclosing <script> element. The server should send it as
// text/javascript with a short cache lifetime. It writes nothing when it
// fails.
func RenderEmbed(w io.Writer, e Embed) error {
	cfg, err := json.Marshal(struct {
		Slug string `json:"slug"`
		Base string `json:"base"`
	}{e.Slug, strings.TrimRight(e.BaseURL, "/")})
	if err != nil {
		return fmt.Errorf("encode embed config for %q: %w", e.Slug, err)
	}
	var buf bytes.Buffer
	data := struct{ Config, Shared string }{string(cfg), embedShared}
	if err := embedTemplate.Execute(&buf, data); err != nil {
		return fmt.Errorf("render embed.js for %q: %w", e.Slug, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}
