package main

import (
	"os"
	"strings"
	"testing"
)

// twinCase is one case of TestServeFlagTwins: flags and environment, and
// what the config must hold (or the error it must name).
type twinCase struct {
	name    string
	args    []string
	env     map[string]string
	check   func(*serveConfig) bool
	wantErr string
}

// TestServeFlagTwins checks the environment twins the flag table gives every
// serve flag: a twin replaces the default, a flag wins over its twin, a
// boolean twin is on for 1 or true, and of several number twins that are not
// whole numbers the first in the table is named.
func TestServeFlagTwins(t *testing.T) {
	cases := []twinCase{
		{"default", nil, nil, func(c *serveConfig) bool {
			return c.KafkaPartitions == 8 && c.Addr == ":8080" && !c.AllowPrivateHealthURLs
		}, ""},
		{"twin replaces default", nil, map[string]string{"AQ_KAFKA_PARTITIONS": " 3 ", "AQ_ADDR": ":1"}, func(c *serveConfig) bool { return c.KafkaPartitions == 3 && c.Addr == ":1" }, ""},
		{"flag wins", []string{"--kafka-partitions", "5"}, map[string]string{"AQ_KAFKA_PARTITIONS": "3"}, func(c *serveConfig) bool { return c.KafkaPartitions == 5 }, ""},
		{"boolean twin", nil, map[string]string{"AQ_ALLOW_PRIVATE_HEALTH_URLS": "TRUE"}, func(c *serveConfig) bool { return c.AllowPrivateHealthURLs }, ""},
		{"boolean twin off", nil, map[string]string{"AQ_ALLOW_PRIVATE_HEALTH_URLS": "0"}, func(c *serveConfig) bool { return !c.AllowPrivateHealthURLs }, ""},
		{"first bad twin named", nil, map[string]string{"AQ_BEACON_WAIT": "x", "AQ_KAFKA_PARTITIONS": "y"}, nil, `AQ_KAFKA_PARTITIONS="y" is not a whole number`},
	}
	for _, tc := range cases {
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

// TestServeFlagsDocumented checks that README.md's table of serve flags
// has a row for every flag of the table, and that a row of one flag with
// a default shows that default.
func TestServeFlagsDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // flag → its row's default cell
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `--") || len(cells) < 4 {
			continue
		}
		names := strings.Split(strings.TrimSpace(cells[1]), ", ")
		for _, name := range names {
			rows[strings.Trim(name, "`")] = strings.TrimSpace(cells[2])
			if len(names) > 1 {
				rows[strings.Trim(name, "`")] = ""
			}
		}
	}
	for _, r := range serveFlagRows(&serveConfig{}, &rawServeFlags{}) {
		def, ok := rows["--"+r.name]
		switch {
		case !ok:
			t.Errorf("--%s is not in README.md's table of serve flags", r.name)
		case def != "" && r.on == nil && r.def != "" && r.def != "0" && !strings.Contains(def, "`"+r.def+"`"):
			t.Errorf("--%s: README.md says the default is %s, the flag %q", r.name, def, r.def)
		}
	}
}
