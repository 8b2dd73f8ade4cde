package main

import "testing"

func TestPprofAddrOnlyOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6060", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{"0.0.0.0:6060", false},
		{":6060", false},
		{"10.0.0.5:6060", false},
		{"example.com:6060", false},
		{"127.0.0.1", false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			_, err := parseServeFlags([]string{"--pprof-addr", tc.addr}, func(string) string { return "" })
			if got := err == nil; got != tc.ok {
				t.Errorf("got accepted %v (%v), want %v", got, err, tc.ok)
			}
		})
	}
}
