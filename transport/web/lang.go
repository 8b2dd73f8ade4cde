package web

import (
	"strconv"
	"strings"
)

// Lang chooses the operator console's language (German or English; the
// waiting page has PageLang) from an Accept-Language header:
// "de" when German ("de", "de-AT", …) is the most acceptable language by
// q-value, "en" otherwise (English is the default for every other language,
// for "*" and for a missing or unreadable header). Among equal q-values the
// first listed wins, as browsers list them in order of preference.
func Lang(acceptLanguage string) string {
	best, bestQ := "", 0.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(part, ";")
		tag = strings.ToLower(strings.TrimSpace(tag))
		if tag == "" {
			continue
		}
		q, ok := quality(params)
		if !ok || q <= bestQ {
			continue
		}
		best, bestQ = tag, q
	}
	if primary, _, _ := strings.Cut(best, "-"); primary == "de" {
		return "de"
	}
	return "en"
}

// quality reads the q parameter of one Accept-Language entry; an entry
// without one has q=1, one with a malformed q is ignored.
func quality(params string) (float64, bool) {
	q := 1.0
	for _, p := range strings.Split(params, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || strings.ToLower(strings.TrimSpace(k)) != "q" {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) { // NaN too
			return 0, false
		}
		q = f
	}
	return q, true
}

// LangCookie keeps a visitor's choice of language (the page's switch,
// ?lang=) for the waiting room's pages.
const LangCookie = "aq-lang"

// Known reports whether lang is one of the page's Languages.
func Known(lang string) bool {
	_, ok := catalog[lang]
	return ok
}

// PageLang chooses the waiting page's language: the visitor's own choice
// (chosen, from the switch or its cookie) when it is one of Languages,
// else the room's language setting, else the most acceptable of Languages
// by the Accept-Language header's q-values (a regional tag such as "pt-BR"
// counts for its language; among equal q-values the first listed wins),
// else English.
func PageLang(chosen, room, acceptLanguage string) string {
	for _, l := range []string{chosen, room} {
		if Known(l) {
			return l
		}
	}
	best, bestQ := "en", 0.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(part, ";")
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if !Known(primary) {
			continue
		}
		if q, ok := quality(params); ok && q > bestQ {
			best, bestQ = primary, q
		}
	}
	return best
}
