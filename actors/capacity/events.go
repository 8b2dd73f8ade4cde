package capacity

import (
	"encoding/json"
	"fmt"
)

// EventVersion is the encoding version written into every event. Decoders
// accept every version up to it; a change of meaning needs a new version and
// a golden file (testdata/events.golden).
const EventVersion = 1

// Event is one change of a capacity room, as it stands in the room's log.
// Renewals of slots (Check, Touch) are not events: after a restart every
// holder keeps the slot one more session (Recovered).
type Event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	// Epoch names the activation that wrote the event: the log offset of
	// its Activated marker. Events of a superseded activation are ignored.
	Epoch int64 `json:"epoch,omitempty"`
	// At is the time of the change, Unix nanoseconds.
	At int64 `json:"at"`
	// ID is the visitor of a queued, admitted or released event.
	ID string `json:"id,omitempty"`
	// Until is when an admitted visitor's slot ends unless renewed.
	Until int64 `json:"until,omitempty"`
	// IDs are the slot holders whose session ended (expired).
	IDs []string `json:"ids,omitempty"`
	// Left are the waiters who stopped checking (expired).
	Left     []string  `json:"left,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
	// KeySealed is the room's cookie key, sealed under the master key
	// (keyed).
	KeySealed []byte `json:"keySealed,omitempty"`
}

// Event types.
const (
	TypeActivated  = "activated"
	TypeConfigured = "configured"
	TypeQueued     = "queued"
	TypeAdmitted   = "admitted"
	TypeReleased   = "released"
	TypeExpired    = "expired"
	TypeKeyed      = "keyed"
)

// Encode returns the event's log encoding.
func (e *Event) Encode() ([]byte, error) {
	e.V = EventVersion
	return json.Marshal(e)
}

// DecodeEvent parses an event from the log.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("decode capacity event: %w", err)
	}
	if e.V < 1 || e.V > EventVersion {
		return e, fmt.Errorf("decode capacity event: unknown version %d", e.V)
	}
	return e, nil
}
