package main

import (
	"strings"
	"testing"
	"time"
)

// TestProxyUpstreamFlags checks that `proxy` takes --upstream-client,
// --upstream-timeout and --visitor-server as serve's --proxy-*, and refuses
// bad values.
func TestProxyUpstreamFlags(t *testing.T) {
	getenv := func(string) string { return "" }
	c, err := parseProxyFlags([]string{"--config", "x.hcl", "--upstream-client", "std", "--upstream-timeout=5s", "--visitor-server", "std"}, getenv)
	if err != nil || c.ProxyUpstreamClient != "std" || c.ProxyUpstreamTimeout != 5*time.Second || c.ProxyVisitorServer != "std" {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = parseProxyFlags([]string{"--config", "x.hcl"}, getenv)
	if err != nil || c.ProxyUpstreamClient != "fast" || c.ProxyUpstreamTimeout != 60*time.Second || c.ProxyVisitorServer != "fast" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, args := range [][]string{
		{"--config", "x.hcl", "--upstream-client", "quick"},
		{"--config", "x.hcl", "--upstream-timeout", "soon"},
		{"--config", "x.hcl", "--upstream-timeout", "0s"},
		{"--config", "x.hcl", "--visitor-server", "quick"},
	} {
		if _, err := parseProxyFlags(args, getenv); err == nil || !strings.Contains(err.Error(), "--proxy-") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
