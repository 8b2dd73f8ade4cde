// Package crawler tells a search engine's crawler from anybody who writes
// its name in a User-Agent header. A request that says "Googlebot" is
// believed only when its address passes the check the search engines
// document: the reverse DNS name of the address lies in the crawler's own
// domain, and a forward lookup of that name gives the same address back.
//
// Answers are cached (a bounded table, positive and negative answers
// alike), lookups run with a timeout and a bounded number at once, and the
// DNS is a seam (Resolver), so that tests run offline.
package crawler

import (
	"strings"
)

// Crawler is one search engine's crawler: the User-Agent token it sends and
// the DNS domains its addresses' reverse names lie in, as its operator
// documents them.
type Crawler struct {
	Name string
	// Tokens are User-Agent substrings (matched without regard to case)
	// that name this crawler.
	Tokens []string
	// Domains are the documented reverse-DNS domains: a name is in one
	// when it is the domain or ends with "." + the domain.
	Domains []string
}

// Known lists the crawlers that can be verified by DNS, with the domains
// their operators document. Crawlers whose operators publish address lists
// instead of reverse names (DuckDuckBot, facebookexternalhit) are not here:
// they cannot be verified this way. googleusercontent.com is left out on
// purpose: any Google Cloud machine has a reverse name there.
var Known = []Crawler{
	{Name: "Googlebot", Tokens: []string{"Googlebot", "Google-InspectionTool", "GoogleOther", "Storebot-Google", "AdsBot-Google", "Mediapartners-Google"},
		Domains: []string{"googlebot.com", "google.com"}},
	{Name: "Bingbot", Tokens: []string{"bingbot", "BingPreview", "msnbot", "adidxbot"}, Domains: []string{"search.msn.com"}},
	{Name: "Applebot", Tokens: []string{"Applebot"}, Domains: []string{"applebot.apple.com"}},
	{Name: "YandexBot", Tokens: []string{"YandexBot", "YandexImages", "YandexMobileBot"}, Domains: []string{"yandex.ru", "yandex.net", "yandex.com"}},
	{Name: "Baiduspider", Tokens: []string{"Baiduspider"}, Domains: []string{"baidu.com", "baidu.jp"}},
	{Name: "Yahoo! Slurp", Tokens: []string{"Slurp"}, Domains: []string{"crawl.yahoo.net"}},
}

// ByUserAgent returns the known crawler whose token s contains (without
// regard to case), or nil. A configured user_agents entry such as
// "Googlebot" and a request's whole User-Agent are both looked up this way.
func ByUserAgent(s string) *Crawler {
	if s == "" {
		return nil
	}
	ls := strings.ToLower(s)
	for i := range Known {
		for _, t := range Known[i].Tokens {
			if strings.Contains(ls, strings.ToLower(t)) {
				return &Known[i]
			}
		}
	}
	return nil
}

// Names returns the names of the known crawlers, for error messages.
func Names() string {
	names := make([]string, len(Known))
	for i, c := range Known {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// InDomain reports whether DNS name host (a trailing dot allowed) lies in
// one of c's domains.
func (c *Crawler) InDomain(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range c.Domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}
