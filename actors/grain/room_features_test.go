package grain

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// A configuration that needs a feature some node lacks is refused as a
// conflict naming the node and the feature; one that needs none passes.
func TestOlderErrorRefusesAWrite(t *testing.T) {
	older := func(needs []string) []string {
		if slices.Contains(needs, room.FeatureModes) {
			return []string{"front,actor m2:1 (version dev, announces no features)"}
		}
		return nil
	}
	soldOut := []room.Event{{Type: room.TypeConfigured, Configured: &room.Configured{Config: room.Config{Mode: room.ModeSoldOut}}}}
	err := olderError(older, soldOut)
	var ge *protocol.Error
	if !errors.As(err, &ge) || ge.Code != protocol.CodeConflict || !strings.Contains(ge.Message, "modes") ||
		!strings.Contains(ge.Message, "m2:1 (version dev, announces no features)") || !strings.Contains(ge.Message, "0.5.0 or newer") {
		t.Fatalf("got %v, want a conflict naming m2:1 and the feature", err)
	}
	queue := []room.Event{{Type: room.TypeConfigured, Configured: &room.Configured{Config: room.Config{Mode: room.ModeQueue}}}}
	if err := olderError(older, queue); err != nil {
		t.Fatalf("a queue configuration: got %v", err)
	}
}
