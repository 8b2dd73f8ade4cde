package web

import (
	"bytes"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestCatalogComplete checks the translators' files: one for each of
// Languages and no other, every key set in each (a key a file lacks would
// decode as ""), and every text with the same placeholders as the English
// one, in any order.
func TestCatalogComplete(t *testing.T) {
	entries, err := fs.ReadDir(files, "i18n")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	want := slices.Clone(Languages)
	sort.Strings(want)
	if !slices.Equal(names, want) {
		t.Errorf("i18n holds %v, want one file for each of %v", names, want)
	}
	if len(Languages) < 11 {
		t.Errorf("only %d languages", len(Languages))
	}
	placeholders := regexp.MustCompile(`\{\w+\}`)
	en := reflect.ValueOf(catalog["en"])
	for _, lang := range Languages {
		m, ok := catalog[lang]
		if !ok {
			t.Errorf("no catalogue for %s", lang)
			continue
		}
		v := reflect.ValueOf(m)
		for i := 0; i < v.NumField(); i++ {
			key := v.Type().Field(i).Tag.Get("json")
			s := v.Field(i).String()
			if strings.TrimSpace(s) == "" {
				t.Errorf("%s.json: %s is missing or empty", lang, key)
			}
			got := placeholders.FindAllString(s, -1)
			want := placeholders.FindAllString(en.Field(i).String(), -1)
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s.json: %s has placeholders %v, English has %v", lang, key, got, want)
			}
		}
		if _, ok := languageNames[lang]; !ok {
			t.Errorf("%s has no name for the language switch", lang)
		}
	}
}

func TestPageLang(t *testing.T) {
	for _, tc := range []struct {
		chosen, room, header, want string
	}{
		{"", "", "", "en"},
		{"", "", "fr-CH, fr;q=0.9, en;q=0.8", "fr"},
		{"", "", "sv, de;q=0.8, en;q=0.5", "de"},
		{"", "", "en;q=0.5, ja;q=0.9", "ja"},
		{"", "", "pt-BR", "pt"},
		{"", "", "ar-EG,ar;q=0.9", "ar"},
		{"", "", "es;q=0.8, it;q=0.8", "es"},
		{"", "", "tr;q=0, nl;q=0.1", "nl"},
		{"", "", "pl;q=abc", "en"},
		{"", "", "zh-CN, *;q=0.5", "en"},
		{"", "es", "de", "es"},
		{"it", "es", "de", "it"},
		{"xx", "", "nl", "nl"},
		{"xx", "yy", "", "en"},
	} {
		if got := PageLang(tc.chosen, tc.room, tc.header); got != tc.want {
			t.Errorf("PageLang(%q, %q, %q) = %q, want %q", tc.chosen, tc.room, tc.header, got, tc.want)
		}
	}
}

// TestRenderRoomOperatorWords checks that a closed room's page carries
// the operator's message and link in the served HTML, so a visitor sees
// them before (or without) any script.
func TestRenderRoomOperatorWords(t *testing.T) {
	p := samplePage()
	p.Lang = "es"
	p.Mode, p.ModeText, p.ModeLink = "soldOut", "Gracias: vuelva el lunes.", "https://shop.example.com/returns"
	html := render(t, p)
	for _, want := range []string{
		`<span id="aq-state" role="status">Agotado</span>`,
		`<p class="aq-banner" id="aq-banner"><span id="aq-banner-text">La venta ha terminado`,
		`<span class="aq-banner-detail" id="aq-banner-detail" dir="auto">Gracias: vuelva el lunes.</span>`,
		`href="https://shop.example.com/returns">Más información</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("sold-out page lacks %q", want)
		}
	}
	if strings.Contains(html, `class="aq-nojs"`) {
		t.Error("a sold-out page offers a number without JavaScript")
	}
	if d := pageData(t, html); d.Mode != "soldOut" || d.ModeMessage == nil || d.ModeMessage.Text != p.ModeText {
		t.Errorf("page data mode %q %+v, want soldOut with the operator's text", d.Mode, d.ModeMessage)
	}
	p.Mode, p.ModeLink = "maintenance", "javascript:alert(1)"
	if html := render(t, p); strings.Contains(html, "javascript:") || !strings.Contains(html, "La tienda está en mantenimiento") {
		t.Error("maintenance page: wrong state line, or a link that is not http(s)")
	}
}

// TestRenderRoomWithoutScript checks the page's way on without
// JavaScript: a form that draws a number on the page without scripts,
// the return URL kept, and, where proof of work is asked, a sentence
// saying why there is none.
func TestRenderRoomWithoutScript(t *testing.T) {
	p := samplePage()
	p.PowEnabled = false
	p.ReturnURL = "https://shop.example.com/event/42?seat=a&b=1"
	html := render(t, p)
	want := `<form class="aq-nojs" method="post" action="https://queue.example.com/queue/summer-fest/wait?return=https%3A%2F%2Fshop.example.com%2Fevent%2F42%3Fseat%3Da%26b%3D1">`
	if !strings.Contains(html, want) {
		t.Errorf("page lacks the form %s", want)
	}
	if !strings.Contains(p.ContentSecurityPolicy(), "form-action 'self' https://queue.example.com;") {
		t.Error("the page's policy does not let the form post to the queue")
	}
	p.PowEnabled = true
	html = render(t, p)
	if strings.Contains(html, `class="aq-nojs"`) || !strings.Contains(html, catalog["en"].NoScriptPow) {
		t.Error("a proof-of-work page offers the form, or does not say why it cannot")
	}
}

func TestRenderRoomLanguageSwitch(t *testing.T) {
	p := samplePage()
	p.Lang = "de"
	p.Query = "return=https%3A%2F%2Fshop.example.com%2F&ticket=secret&lang=en"
	html := render(t, p)
	for _, want := range []string{
		`<nav class="aq-langs" aria-label="Sprache">`,
		`<a href="?lang=ar&amp;return=https%3A%2F%2Fshop.example.com%2F" lang="ar" hreflang="ar">العربية</a>`,
		`lang="de" hreflang="de" aria-current="true">Deutsch</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("switch lacks %s", want)
		}
	}
	if strings.Count(html, "hreflang=") != len(Languages) || strings.Contains(html, "secret") {
		t.Error("the switch does not list every language once, or carries the ticket")
	}
}

func TestRenderWait(t *testing.T) {
	render := func(p WaitPage) string {
		t.Helper()
		var buf bytes.Buffer
		if err := RenderWait(&buf, p); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	base := WaitPage{Slug: "sale", Name: "Sale", Message: "Bring ID", Lang: "en", Query: "return=https%3A%2F%2Fshop%2F&ticket=x"}

	take := base
	take.State = WaitTake
	html := render(take)
	for _, want := range []string{`<form class="aq-nojs" method="post" action="/queue/sale/wait?return=https%3A%2F%2Fshop%2F">`, "Get my waiting number", "Bring ID"} {
		if !strings.Contains(html, want) {
			t.Errorf("take page lacks %q", want)
		}
	}
	if strings.Contains(html, "http-equiv=\"refresh\"") || strings.Contains(html, "<script") {
		t.Error("the take page refreshes or carries a script")
	}

	w := base
	w.State, w.Number, w.Ahead, w.Serving, w.Refresh, w.Lang = WaitWaiting, 42, 7, 35, 5, "nl"
	html = render(w)
	for _, want := range []string{`<meta http-equiv="refresh" content="5">`, `<p class="aq-number" id="aq-number">42</p>`,
		`<dd id="aq-ahead">7</dd>`, "Nr. 35", "elke 5 seconden", `<a href="/queue/sale/wait?return=https%3A%2F%2Fshop%2F">Nu vernieuwen</a>`} {
		if !strings.Contains(html, want) {
			t.Errorf("waiting page lacks %q", want)
		}
	}

	c := base
	c.State, c.Mode, c.ModeText, c.ModeLink, c.Refresh, c.Lang = WaitClosed, "maintenance", "Back at 6", "https://status.example.com", 60, "ar"
	html = render(c)
	for _, want := range []string{`dir="rtl"`, "المتجر قيد الصيانة", "Back at 6", `href="https://status.example.com"`} {
		if !strings.Contains(html, want) {
			t.Errorf("closed page lacks %q", want)
		}
	}
	p := base
	p.State = WaitPow
	if html := render(p); !strings.Contains(html, catalog["en"].NoScriptPow) || strings.Contains(html, "<form") {
		t.Error("the proof-of-work page does not say why, or offers the form")
	}
}
