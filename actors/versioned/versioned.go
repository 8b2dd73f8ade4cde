// Package versioned is the log encoding the pure rules share for their
// events (actors/room's and actors/capacity's): JSON carrying a version
// number, which the writer sets to the newest version and every reader
// checks against the newest version it knows, so that a node never
// applies an event whose meaning it cannot know.
package versioned

import (
	"encoding/json"
	"fmt"
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
	if *v < 1 || *v > version {
		return fmt.Errorf("decode %s: unknown version %d", what, *v)
	}
	return nil
}
