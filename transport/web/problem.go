package web

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
)

var problemTemplate = template.Must(template.New("problem.html").ParseFS(files, "templates/problem.html"))

// RenderNoTarget writes the page a browser sees when it follows the
// gateway link (/queue/<slug>/enter) of a room that has no target URL and
// was given no valid return URL: there is nowhere to forward it, so the
// page says so instead of queueing the visitor for nothing. lang is "de"
// or "en" (see Lang). The page loads only its stylesheet, from its own
// origin. It writes nothing when it fails.
func RenderNoTarget(w io.Writer, lang string) error {
	t, ok := catalog[lang]
	if !ok {
		lang, t = "en", catalog["en"]
	}
	var buf bytes.Buffer
	err := problemTemplate.Execute(&buf, struct {
		Lang, Title, Text, Footer, CSSURL string
	}{lang, t.NoTargetTitle, t.NoTargetText, t.Footer, assetURL("", "room.css")})
	if err != nil {
		return fmt.Errorf("render the no-target page: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}
