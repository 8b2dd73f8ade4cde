// Package target is what the load-test runner may aim at and how it keeps
// to it: the loopback guard on the target URL, and the dedicated test room
// the runner creates through the admin API and removes afterwards.
package target

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Check parses rawURL as the base URL of a server under test and refuses it
// unless its host is a loopback address (127.0.0.0/8, ::1, localhost) or is
// named, exactly and case-insensitively, in allowed. It returns the parsed
// URL without a trailing slash, path, query or fragment.
func Check(rawURL string, allowed []string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("target URL %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("target URL %q: scheme must be http or https", rawURL)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("target URL %q: no host", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("target URL %q: credentials in the URL are not accepted", rawURL)
	}
	if !IsLoopback(host) && !isAllowed(host, allowed) {
		return nil, fmt.Errorf("refusing target host %q: not a loopback address; name it with --allow-host %s to load-test it", host, host)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// IsLoopback reports whether host (a name or a literal address, without
// port or brackets) is localhost or an address in 127.0.0.0/8 or ::1. Other
// names are not resolved: a name that happens to resolve to a loopback
// address today is still refused, so the guard does not depend on DNS.
func IsLoopback(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isAllowed(host string, allowed []string) bool {
	for _, a := range allowed {
		a = strings.TrimSuffix(strings.Trim(a, "[]"), ".")
		if a != "" && strings.EqualFold(a, strings.TrimSuffix(host, ".")) {
			return true
		}
	}
	return false
}
