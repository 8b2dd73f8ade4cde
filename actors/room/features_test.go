package room_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/versioned"
)

// An event that uses a feature names it with its release, so that a reader
// which does not know it can refuse the room and say what it needs.
func TestEventNeedsItsFeatures(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  room.Config
		want map[string]string
	}{
		{"queue", room.Config{Mode: room.ModeQueue}, nil},
		{"sold out", room.Config{Mode: room.ModeSoldOut}, map[string]string{"modes": "0.4.0"}},
		{"scheduled event", room.Config{Mode: room.ModeQueue, Events: []room.Period{{Name: "sale"}}}, map[string]string{"events": "0.4.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := room.Event{Type: room.TypeConfigured, Configured: &room.Configured{Config: tc.cfg}}
			b, err := e.Encode()
			if err != nil {
				t.Fatal(err)
			}
			d, err := room.DecodeEvent(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Needs, tc.want) {
				t.Errorf("needs %v, want %v (%s)", d.Needs, tc.want, b)
			}
		})
	}
}

func TestDecodeRefusesUnknownFeature(t *testing.T) {
	in := `{"v":1,"type":"configured","needs":{"modes":"0.4.0","waves":"0.7.0"},"at":1,"configured":{"config":{"slug":"a"}}}`
	_, err := room.DecodeEvent([]byte(in))
	var ne *versioned.NewerError
	if !errors.As(err, &ne) || ne.Feature != "waves" || ne.Since != "0.7.0" {
		t.Fatalf("got %v, want a refusal naming waves and 0.7.0", err)
	}
	if !strings.Contains(err.Error(), `needs the feature "waves" of aditus-queue 0.7.0 or newer`) {
		t.Errorf("message %q does not say what is needed", err)
	}
	_, err = room.DecodeEvent([]byte(`{"v":2,"type":"configured","at":1}`))
	if !errors.As(err, &ne) || ne.Version != 2 {
		t.Fatalf("a newer version: got %v, want a NewerError", err)
	}
}
