package grain

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// announced lets an administrative write's events through only when every
// node announces the features they need (olderError). The writes of
// schedule.go follow a configuration that passed here, and go through.
func (g *roomGrain) announced(evs []room.Event, err error) ([]room.Event, error) {
	if err != nil {
		return nil, err
	}
	if err := olderError(g.deps.Older, evs); err != nil {
		return nil, err
	}
	return evs, nil
}

// olderError refuses a write whose events need features some nodes do not
// announce; nil when every node announces them.
func olderError(older func([]string) []string, evs []room.Event) error {
	if older == nil {
		return nil
	}
	var needs []string
	for i := range evs {
		for _, f := range evs[i].NeededFeatures() {
			if !slices.Contains(needs, f) {
				needs = append(needs, f)
			}
		}
	}
	nodes := older(needs)
	if len(nodes) == 0 {
		return nil
	}
	sort.Strings(needs)
	return &protocol.Error{Code: protocol.CodeConflict, Message: fmt.Sprintf(
		"this change needs the feature(s) %s, which nodes of the cluster do not announce yet: %s; upgrade them first (every node at aditus-queue %s or newer), then try again",
		strings.Join(needs, ", "), strings.Join(nodes, "; "), announcedSince)}
}

// announcedSince is the first release whose nodes announce their features.
const announcedSince = "0.5.0"
