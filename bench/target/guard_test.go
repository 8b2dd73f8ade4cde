package target

import "testing"

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		url     string
		allowed []string
		wantOK  bool
		want    string
	}{
		{"IPv4 loopback", "http://127.0.0.1:8080", nil, true, "http://127.0.0.1:8080"},
		{"other loopback in 127/8", "http://127.4.5.6:9000/queue/x", nil, true, "http://127.4.5.6:9000"},
		{"IPv6 loopback", "http://[::1]:8080/", nil, true, "http://[::1]:8080"},
		{"localhost", "https://localhost:8443", nil, true, "https://localhost:8443"},
		{"localhost upper case", "http://LOCALHOST", nil, true, "http://LOCALHOST"},
		{"private address", "http://10.0.0.1:8080", nil, false, ""},
		{"public name", "https://example.com", nil, false, ""},
		{"name that merely starts with localhost", "http://localhost.example.com", nil, false, ""},
		{"name that contains 127", "http://127.0.0.1.example.com", nil, false, ""},
		{"unspecified address", "http://0.0.0.0:8080", nil, false, ""},
		{"allowed explicitly", "http://10.0.0.1:8080", []string{"10.0.0.1"}, true, "http://10.0.0.1:8080"},
		{"allowed name, case-insensitive", "https://Staging.Example.com", []string{"staging.example.com"}, true, "https://Staging.Example.com"},
		{"allowed names another host", "https://example.com", []string{"example.org"}, false, ""},
		{"ws scheme", "ws://127.0.0.1:8080", nil, false, ""},
		{"no host", "http:///queue", nil, false, ""},
		{"credentials", "http://u:p@127.0.0.1", nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := Check(tc.url, tc.allowed)
			if (err == nil) != tc.wantOK {
				t.Fatalf("Check(%q): got error %v, want ok %v", tc.url, err, tc.wantOK)
			}
			if tc.wantOK && u.String() != tc.want {
				t.Errorf("Check(%q): got %q, want %q", tc.url, u, tc.want)
			}
		})
	}
}
