package main

import (
	"strings"
	"testing"
)

func TestLoadTestLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		name          string
		args          []string
		env           map[string]string
		rate, seconds int
		err           string
	}{
		{"defaults", nil, nil, 5000, 600, ""},
		{"flags lower", []string{"--loadtest-max-rate", "100", "--loadtest-max-seconds", "30"}, nil, 100, 30, ""},
		{"env twins", nil, map[string]string{"AQ_LOADTEST_MAX_RATE": "20000", "AQ_LOADTEST_MAX_SECONDS": "60"}, 20000, 60, ""},
		{"flag wins", []string{"--loadtest-max-rate", "10"}, map[string]string{"AQ_LOADTEST_MAX_RATE": "20000"}, 10, 600, ""},
		{"rate beyond the runner", []string{"--loadtest-max-rate", "100001"}, nil, 0, 0, "--loadtest-max-rate"},
		{"zero seconds", []string{"--loadtest-max-seconds", "0"}, nil, 0, 0, "--loadtest-max-seconds"},
		{"seconds beyond the runner", []string{"--loadtest-max-seconds", "601"}, nil, 0, 0, "--loadtest-max-seconds"},
		{"env twin not a number", nil, map[string]string{"AQ_LOADTEST_MAX_RATE": "5k"}, 0, 0, "AQ_LOADTEST_MAX_RATE"},
		{"env twin with spaces", nil, map[string]string{"AQ_LOADTEST_MAX_SECONDS": " 60 "}, 5000, 60, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.LoadTestMaxRate != tc.rate || c.LoadTestMaxSeconds != tc.seconds {
				t.Fatalf("got %d/s %d s, want %d/s %d s", c.LoadTestMaxRate, c.LoadTestMaxSeconds, tc.rate, tc.seconds)
			}
		})
	}
}
