package main

import "testing"

func TestAllowPrivateHealthURLsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", false},
		{[]string{"--allow-private-health-urls"}, "", true},
		{nil, "true", true},
		{nil, "1", true},
		{[]string{"--allow-private-health-urls=false"}, "true", false},
	} {
		c, err := parseServeFlags(tc.args, func(k string) string {
			if k == "AQ_ALLOW_PRIVATE_HEALTH_URLS" {
				return tc.env
			}
			return ""
		})
		if err != nil || c.AllowPrivateHealthURLs != tc.want {
			t.Fatalf("%v env %q: got %v %v, want %v", tc.args, tc.env, c, err, tc.want)
		}
	}
}
