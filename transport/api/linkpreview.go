package api

import (
	"net/http"
	"strings"
)

// unfurlers are the User-Agent marks of the link previewers of chat and
// social apps, which fetch a link as soon as it is posted: Slack, Discord,
// Telegram, WhatsApp, Facebook and Messenger, X (Twitter), LinkedIn,
// Skype and Teams, Mastodon, iMessage. Kept short on purpose: a previewer
// that is not listed draws a number nobody uses, which the room forgets
// after its grace period; a browser wrongly listed would only be sent to
// the page to draw its number there.
var unfurlers = []string{
	"Slackbot", "Discordbot", "TelegramBot", "WhatsApp", "facebookexternalhit", "Facebot",
	"Twitterbot", "LinkedInBot", "SkypeUriPreview", "Microsoft Teams", "Mastodon", "iMessageLinkPreview",
}

// isPreview reports whether r is a fetch of the gateway link that no
// visitor made: HEAD, a prefetch (Sec-Purpose or Purpose: prefetch, as
// browsers send for prefetches and prerenders), or a known link
// previewer. It gets the waiting page without a number; the page draws
// one when it runs in a browser.
func isPreview(r *http.Request) bool {
	if r.Method == http.MethodHead {
		return true
	}
	for _, h := range []string{"Sec-Purpose", "Purpose", "X-Purpose", "X-Moz"} {
		if strings.Contains(strings.ToLower(r.Header.Get(h)), "prefetch") ||
			strings.Contains(strings.ToLower(r.Header.Get(h)), "preview") {
			return true
		}
	}
	ua := r.UserAgent()
	for _, u := range unfurlers {
		if strings.Contains(ua, u) {
			return true
		}
	}
	return false
}
