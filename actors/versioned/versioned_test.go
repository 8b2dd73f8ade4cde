package versioned

import (
	"strings"
	"testing"
)

type event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
}

func TestRoundTrip(t *testing.T) {
	e := event{V: 7, Type: "created"}
	b, err := Encode(&e, &e.V, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"v":2,"type":"created"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	var d event
	if err := Decode(b, &d, &d.V, 2, "test event"); err != nil || d != (event{V: 2, Type: "created"}) {
		t.Fatalf("got %+v, %v", d, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"newer version", `{"v":3,"type":"x"}`, "decode test event: unknown version 3"},
		{"no version", `{"type":"x"}`, "decode test event: unknown version 0"},
		{"not JSON", `{"v":`, "decode test event: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d event
			err := Decode([]byte(tc.in), &d, &d.V, 2, "test event")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
