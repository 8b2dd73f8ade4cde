package versioned

import (
	"errors"
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

// A newer version and a feature the reader does not know are refused as
// NewerError, the feature named with its release; known features pass.
func TestNewerRefused(t *testing.T) {
	var d event
	err := Decode([]byte(`{"v":3,"type":"x"}`), &d, &d.V, 2, "test event")
	var ne *NewerError
	if !errors.As(err, &ne) || ne.Version != 3 {
		t.Fatalf("newer version: got %v", err)
	}
	known := map[string]string{"modes": "0.4.0"}
	if err := CheckNeeds(map[string]string{"modes": "0.4.0"}, known, "test event"); err != nil {
		t.Fatalf("known feature: %v", err)
	}
	err = CheckNeeds(map[string]string{"modes": "0.4.0", "waves": "0.9.0", "tides": "0.8.0"}, known, "test event")
	if !errors.As(err, &ne) || ne.Feature != "tides" || ne.Since != "0.8.0" ||
		err.Error() != `decode test event: it needs the feature "tides" of aditus-queue 0.8.0 or newer` {
		t.Fatalf("unknown features: got %v, want the first by name", err)
	}
}
