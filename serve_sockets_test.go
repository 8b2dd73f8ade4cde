package main

import (
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/transport/ws"
)

func TestMaxPageSocketsFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want int
		err  string
	}{
		{"default", nil, nil, ws.DefaultPerNode, ""},
		{"flag", []string{"--max-page-sockets", "500"}, nil, 500, ""},
		{"env twin", nil, map[string]string{"AQ_MAX_PAGE_SOCKETS": "700"}, 700, ""},
		{"flag wins", []string{"--max-page-sockets", "9"}, map[string]string{"AQ_MAX_PAGE_SOCKETS": "700"}, 9, ""},
		{"zero is not unlimited", []string{"--max-page-sockets", "0"}, nil, 0, "--max-page-sockets"},
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
			if c.MaxPageSockets != tc.want {
				t.Fatalf("got %d, want %d", c.MaxPageSockets, tc.want)
			}
		})
	}
}
