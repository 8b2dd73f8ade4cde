package web

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// messages holds every visitor-facing sentence of the waiting room in one
// language, read from i18n/<lang>.json (one file a language, the same keys,
// for translators to edit). The template reads the static ones; all of them
// travel to the page's scripts in the page data, so the translations live
// in one place. Values with {n}, {h}, {m}, {ahead}, {wait} and {time} are
// filled in by i18n.js with figures formatted by Intl.
type messages struct {
	Title          string `json:"title"`
	Live           string `json:"live"`
	Joining        string `json:"joining"`
	Verifying      string `json:"verifying"`
	Waiting        string `json:"waiting"`
	PreQueue       string `json:"preQueue"`
	Drawing        string `json:"drawing"`
	Admitted       string `json:"admitted"`
	Forwarding     string `json:"forwarding"`
	Paused         string `json:"paused"`
	PausedDefault  string `json:"pausedDefault"`
	PausedJoin     string `json:"pausedJoin"`
	Reconnecting   string `json:"reconnecting"`
	Gone           string `json:"gone"`
	YourNumber     string `json:"yourNumber"`
	Position       string `json:"position"`
	Ahead          string `json:"ahead"`
	Admitting      string `json:"admitting"`
	NumberPrefix   string `json:"numberPrefix"`
	Wait           string `json:"wait"`
	WaitUnderOne   string `json:"waitUnderOne"`
	WaitMinutes    string `json:"waitMinutes"`
	WaitHours      string `json:"waitHours"`
	WaitPaused     string `json:"waitPaused"`
	OpensIn        string `json:"opensIn"`
	OpensOn        string `json:"opensOn"`
	DrawNote       string `json:"drawNote"`
	DrawSealed     string `json:"drawSealed"`
	DrawMade       string `json:"drawMade"`
	DrawDetails    string `json:"drawDetails"`
	DrawCheck      string `json:"drawCheck"`
	DrawChecking   string `json:"drawChecking"`
	DrawVerified   string `json:"drawVerified"`
	DrawFailed     string `json:"drawFailed"`
	DrawConsistent string `json:"drawConsistent"`
	KeepOpen       string `json:"keepOpen"`
	KeepPlace      string `json:"keepPlace"`
	Progress       string `json:"progress"`
	Announce       string `json:"announce"`
	Footer         string `json:"footer"`
	NotFoundTitle  string `json:"notFoundTitle"`
	NotFoundText   string `json:"notFoundText"`
	NoTargetTitle  string `json:"noTargetTitle"`
	NoTargetText   string `json:"noTargetText"`
	// TooManyCodes is the page of a browser over its address's budget
	// of bypass-code attempts.
	TooManyCodesTitle string `json:"tooManyCodesTitle"`
	TooManyCodesText  string `json:"tooManyCodesText"`
	// NoScript offers the page without JavaScript (the form that draws
	// a number); NoScriptPow replaces it where the room asks for proof of
	// work, which cannot run without scripts.
	NoScript    string `json:"noScript"`
	NoScriptPow string `json:"noScriptPow"`
	TakeNumber  string `json:"takeNumber"`
	RefreshNote string `json:"refreshNote"`
	RefreshNow  string `json:"refreshNow"`
	// OverBudget is the page without JavaScript refusing a number to an
	// address over its budget of new numbers.
	OverBudget string `json:"overBudget"`
	OldBrowser string `json:"oldBrowser"`
	// The room's modes: the state line and the banner of each.
	SoldOut            string `json:"soldOut"`
	SoldOutDefault     string `json:"soldOutDefault"`
	Maintenance        string `json:"maintenance"`
	MaintenanceDefault string `json:"maintenanceDefault"`
	QueueAll           string `json:"queueAll"`
	QueueAllDefault    string `json:"queueAllDefault"`
	ModeLink           string `json:"modeLink"`
	// TurnTitle is the page title once the turn has come in a background
	// tab; NotifyMe offers the system notification.
	TurnTitle string `json:"turnTitle"`
	NotifyMe  string `json:"notifyMe"`
	// Language labels the page's choice of language.
	Language string `json:"language"`
}

// Languages are the waiting page's languages, each with a catalogue in
// i18n/<lang>.json; English is the fallback.
var Languages = []string{"de", "en", "es", "fr", "it", "nl", "pl", "pt", "tr", "ar", "ja"}

// languageNames are the languages' own names, for the page's switch.
var languageNames = map[string]string{
	"de": "Deutsch", "en": "English", "es": "Español", "fr": "Français", "it": "Italiano", "nl": "Nederlands",
	"pl": "Polski", "pt": "Português", "tr": "Türkçe", "ar": "العربية", "ja": "日本語",
}

// rightToLeft lists the languages written from right to left.
var rightToLeft = map[string]bool{"ar": true}

// dir is the writing direction of lang, for the html element's dir.
func dir(lang string) string {
	if rightToLeft[lang] {
		return "rtl"
	}
	return "ltr"
}

var catalog = loadCatalog()

// loadCatalog reads every language's catalogue; a file with a key the
// page does not know, or that is not JSON, stops the program at start
// (the completeness of each is TestCatalogComplete's).
func loadCatalog() map[string]messages {
	out := make(map[string]messages, len(Languages))
	for _, lang := range Languages {
		raw, err := files.ReadFile("i18n/" + lang + ".json")
		if err != nil {
			panic(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var m messages
		if err := dec.Decode(&m); err != nil {
			panic(fmt.Errorf("i18n/%s.json: %w", lang, err))
		}
		out[lang] = m
	}
	return out
}

// words is lang's catalogue, English for a language without one.
func words(lang string) (string, messages) {
	if t, ok := catalog[lang]; ok {
		return lang, t
	}
	return "en", catalog["en"]
}
