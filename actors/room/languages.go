package room

import (
	"slices"
	"unicode/utf8"
)

// Languages are the visitor page's languages (transport/web has a
// catalogue for each): a room's Language and the keys of its per-language
// texts must be one of them.
var Languages = []string{"de", "en", "es", "fr", "it", "nl", "pl", "pt", "tr", "ar", "ja"}

// KnownLanguage reports whether lang is one of Languages.
func KnownLanguage(lang string) bool { return slices.Contains(Languages, lang) }

// MessageIn is the room's message for a visitor reading lang: its text
// in Messages when there is one, else Message.
func (c *Config) MessageIn(lang string) string {
	if s := c.Messages[lang]; s != "" {
		return s
	}
	return c.Message
}

// Text is the closed mode's message for a visitor reading lang: the text
// in that language (Texts, or De and En for German and English), else the
// English one, else the German one, else "".
func (m ModeMessage) Text(lang string) string {
	legacy := map[string]string{"de": m.De, "en": m.En}
	for _, l := range []string{lang, "en", "de"} {
		if s := m.Texts[l]; s != "" {
			return s
		}
		if s := legacy[l]; s != "" {
			return s
		}
	}
	return ""
}

// validateTexts checks a map of texts by language: known languages only,
// each text at most max characters.
func validateTexts(field string, texts map[string]string, max int) error {
	for lang, s := range texts {
		if !KnownLanguage(lang) {
			return invalid(field, "%q is not one of the page's languages %v", lang, Languages)
		}
		if utf8.RuneCountInString(s) > max {
			return invalid(field+"."+lang, "at most %d characters", max)
		}
	}
	return nil
}

// validateLanguages checks the room's language and per-language message.
func (c *Config) validateLanguages() error {
	if c.Language != "" && !KnownLanguage(c.Language) {
		return invalid("language", "must be one of %v, or empty for the visitor's browser language", Languages)
	}
	return validateTexts("messages", c.Messages, 2000)
}
