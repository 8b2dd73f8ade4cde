package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/template"
)

// Embed configures the shop-side script served at GET /queue/<slug>/embed.js.
type Embed struct {
	Slug    string // the room's slug
	BaseURL string // the server's public URL, without trailing slash
}

// embedTemplate is plain JavaScript with one insertion point, the
// configuration object; it is filled with JSON only (see RenderEmbed).
var embedTemplate = template.Must(template.New("embed.js").ParseFS(files, "templates/embed.js"))

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
	if err := embedTemplate.Execute(&buf, string(cfg)); err != nil {
		return fmt.Errorf("render embed.js for %q: %w", e.Slug, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}
