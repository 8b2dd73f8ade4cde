package main

import (
	"strings"
	"testing"
)

// TestServeFlagTwins checks the environment twins the flag table gives every
// serve flag: a twin replaces the default, a flag wins over its twin, a
// boolean twin is on for 1 or true, and a number twin that is not a whole
// number stops the start naming the variable.
func TestServeFlagTwins(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(*serveConfig) bool
		wantErr string
	}{
		{"default", nil, nil, func(c *serveConfig) bool {
			return c.KafkaPartitions == 8 && c.Addr == ":8080" && !c.AllowPrivateHealthURLs
		}, ""},
		{"twin replaces default", nil, map[string]string{"AQ_KAFKA_PARTITIONS": " 3 ", "AQ_ADDR": ":1"}, func(c *serveConfig) bool { return c.KafkaPartitions == 3 && c.Addr == ":1" }, ""},
		{"flag wins", []string{"--kafka-partitions", "5"}, map[string]string{"AQ_KAFKA_PARTITIONS": "3"}, func(c *serveConfig) bool { return c.KafkaPartitions == 5 }, ""},
		{"boolean twin", nil, map[string]string{"AQ_ALLOW_PRIVATE_HEALTH_URLS": "TRUE"}, func(c *serveConfig) bool { return c.AllowPrivateHealthURLs }, ""},
		{"boolean twin off", nil, map[string]string{"AQ_ALLOW_PRIVATE_HEALTH_URLS": "0"}, func(c *serveConfig) bool { return !c.AllowPrivateHealthURLs }, ""},
		{"number twin not a number", nil, map[string]string{"AQ_BEACON_WAIT": "30s"}, nil, `AQ_BEACON_WAIT="30s" is not a whole number`},
		{"first bad twin named", nil, map[string]string{"AQ_BEACON_WAIT": "x", "AQ_KAFKA_PARTITIONS": "y"}, nil, "AQ_KAFKA_PARTITIONS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Fatalf("got %+v, not what the twins say", c)
			}
		})
	}
}
