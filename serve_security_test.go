package main

import (
	"bytes"
	"strings"
	"testing"
)

// An admin token shorter than 24 characters is refused at start, from the
// flag and from the environment alike, with a line that says what to do;
// the generated one is long enough and stays as it is.
func TestShortAdminTokenRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		ok   bool
	}{
		{[]string{"--admin-token", "change-me"}, "", false},
		{nil, "short-token", false},
		{[]string{"--admin-token", strings.Repeat("x", 23)}, "", false},
		{[]string{"--admin-token", strings.Repeat("x", 24)}, "", true},
		{nil, strings.Repeat("y", 40), true},
		{nil, "", true},
	} {
		c, err := parseServeFlags(tc.args, func(k string) string {
			if k == "AQ_ADMIN_TOKEN" {
				return tc.env
			}
			return ""
		})
		if tc.ok != (err == nil) {
			t.Errorf("%v env %q: %v, want ok %v", tc.args, tc.env, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "at least 24") {
			t.Errorf("%v env %q: %q does not say how long a token must be", tc.args, tc.env, err)
		}
		if err == nil && tc.env == "" && tc.args == nil {
			var out bytes.Buffer
			c.DataDir = t.TempDir()
			if _, err := adminToken(c, &out); err != nil {
				t.Fatal(err)
			}
			tok := strings.TrimSpace(out.String()[strings.LastIndex(strings.TrimSpace(out.String()), "\n")+1:])
			if len(tok) < minAdminToken || !strings.HasPrefix(tok, "aqa_") {
				t.Errorf("generated token %q is shorter than %d", tok, minAdminToken)
			}
		}
	}
}

func TestTrustedProxiesFlag(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "AQ_TRUSTED_PROXIES" {
				return v
			}
			return ""
		}
	}
	c, err := parseServeFlags(nil, env("10.0.0.0/8, 192.0.2.7"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.trusted(); err != nil || len(p) != 2 {
		t.Fatalf("trusted %v %v, want two prefixes", p, err)
	}
	if _, err := parseServeFlags([]string{"--trusted-proxies", "10.0.0.0/99"}, env("")); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
		t.Fatalf("a bad CIDR: %v, want an error naming the flag", err)
	}
	if c, err := parseServeFlags(nil, env("")); err != nil || c.TrustedProxies != "" {
		t.Fatalf("default: %v %v, want none trusted", c, err)
	}
}

// Both commands start through one bootstrap: --peers drops empty entries
// alike, and the proxy has the operations listener with the node's metrics
// and the probe, as serve has.
func TestPeersDropEmptyEntries(t *testing.T) {
	c := &serveConfig{Peers: " a:1, ,b:2,,"}
	if got := c.peers(); len(got) != 2 || got[0] != "a:1" || got[1] != "b:2" {
		t.Fatalf("peers %q", got)
	}
	if got := (&serveConfig{}).peers(); len(got) != 0 {
		t.Fatalf("no peers: %q", got)
	}
}
