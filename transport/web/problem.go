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
// page says so instead of queueing the visitor for nothing. lang is one
// of Languages (see PageLang). The page loads only its stylesheet, from its own
// origin. It writes nothing when it fails.
func RenderNoTarget(w io.Writer, lang string) error {
	return renderProblem(w, lang, "no-target", func(t messages) (string, string) { return t.NoTargetTitle, t.NoTargetText })
}

// RenderTooManyCodes writes the page a browser sees when it follows the
// gateway link with a bypass code from an address over its budget of code
// attempts: the code was not looked at, whatever it is. As RenderNoTarget
// otherwise.
func RenderTooManyCodes(w io.Writer, lang string) error {
	return renderProblem(w, lang, "too-many-codes", func(t messages) (string, string) { return t.TooManyCodesTitle, t.TooManyCodesText })
}

func renderProblem(w io.Writer, lang, name string, text func(messages) (title, text string)) error {
	lang, t := words(lang)
	title, body := text(t)
	var buf bytes.Buffer
	err := problemTemplate.Execute(&buf, struct {
		Lang, Dir, Title, Text, Footer, CSSURL string
	}{lang, dir(lang), title, body, t.Footer, assetURL("", "room.css")})
	if err != nil {
		return fmt.Errorf("render the %s page: %w", name, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}
