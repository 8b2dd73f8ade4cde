// Package versioned is the log encoding the pure rules share for their
// events (actors/room's and actors/capacity's): JSON carrying a version
// number, which the writer sets to the newest version and every reader
// checks against the newest version it knows, so that a node never
// applies an event whose meaning it cannot know. Within a version, an event
// that uses a feature later than the version's first form names it in its
// needs (CheckNeeds), and a reader that does not know it refuses.
package versioned

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Encode sets *v, the event's version field, to version and answers e's
// encoding.
func Encode(e any, v *int, version int) ([]byte, error) {
	*v = version
	return json.Marshal(e)
}

// Decode parses b into e and checks its version *v: from 1 to version.
// what names the event in the error ("capacity event").
func Decode(b []byte, e any, v *int, version int, what string) error {
	if err := json.Unmarshal(b, e); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	if *v > version {
		return &NewerError{What: what, Version: *v}
	}
	if *v < 1 {
		return fmt.Errorf("decode %s: unknown version %d", what, *v)
	}
	return nil
}

// NewerError is an event this binary cannot read because a newer release
// wrote it: a newer version of the encoding, or a feature it does not know.
// A reader refuses the whole stream then (it never skips or guesses);
// Since, when known, is the release that brought the feature.
type NewerError struct {
	What    string
	Version int
	Feature string
	Since   string
}

func (e *NewerError) Error() string {
	if e.Feature != "" {
		return fmt.Sprintf("decode %s: it needs the feature %q of aditus-queue %s or newer", e.What, e.Feature, e.Since)
	}
	return fmt.Sprintf("decode %s: unknown version %d (written by a newer release)", e.What, e.Version)
}

// CheckNeeds refuses an event whose needs (feature: the release that
// brought it) name a feature missing from known.
func CheckNeeds(needs map[string]string, known map[string]string, what string) error {
	names := make([]string, 0, len(needs))
	for f := range needs {
		if _, ok := known[f]; !ok {
			names = append(names, f)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return &NewerError{What: what, Feature: names[0], Since: needs[names[0]]}
}
