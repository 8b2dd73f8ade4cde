package main

import "testing"

// Without --public-url the node hands out no address of its own invention:
// the links are relative (transport/api), and a load test sends its
// visitors to this node's own listener.
func TestPublicURLDefault(t *testing.T) {
	c, err := parseServeFlags([]string{"--addr", ":9999"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.PublicURL != "" {
		t.Fatalf("--public-url defaults to %q, want none: a node on another address would send its visitors there", c.PublicURL)
	}
	for _, tc := range []struct{ public, addr, want string }{
		{"", ":8080", "http://127.0.0.1:8080"},
		{"", "0.0.0.0:8081", "http://127.0.0.1:8081"},
		{"", "[::]:8082", "http://127.0.0.1:8082"},
		{"", "192.0.2.1:80", "http://192.0.2.1:80"},
		{"https://queue.example.com", ":8080", "https://queue.example.com"},
	} {
		if got := loadTestBase(tc.public, tc.addr); got != tc.want {
			t.Errorf("loadTestBase(%q, %q): got %q, want %q", tc.public, tc.addr, got, tc.want)
		}
	}
}
