package capacity

import (
	rate "github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/versioned"
)

// EventVersion is the newest encoding of a capacity room's events (package versioned
// writes it and refuses newer ones); a change of meaning needs a new version
// and testdata/events.golden.
const EventVersion = 1

// Event is one change of a capacity room, as it stands in the room's log.
// Renewals of slots (Check, Touch) are not events: after a restart every
// holder keeps the slot one more session (Recovered).
type Event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	// Epoch and At as in actors/room's Event: the writer's activation
	// marker offset, and the time of the change in Unix nanoseconds.
	Epoch int64 `json:"epoch,omitempty"`
	At    int64 `json:"at"`
	// ID is the visitor of a queued, admitted or released event.
	ID string `json:"id,omitempty"`
	// Arrived is when a queued visitor first came, when that is before
	// At: a provisional place confirmed by the visitor's return keeps its
	// arrival order. Zero: the visitor arrived At, at the end of the line.
	Arrived int64 `json:"arrived,omitempty"`
	// Until is when an admitted visitor's slot ends unless renewed, or
	// when a restore's hold ends (restored).
	Until int64 `json:"until,omitempty"`
	// Held is how many slots a restore holds (restored).
	Held int `json:"held,omitempty"`
	// IDs are the slot holders whose session ended (expired).
	IDs []string `json:"ids,omitempty"`
	// Left are the waiters who stopped checking (expired).
	Left     []string  `json:"left,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
	// KeySealed is the room's cookie key, sealed under the master key
	// (keyed).
	KeySealed []byte `json:"keySealed,omitempty"`
	// Pow is the automatic proof of work from now on (pow; Bits 0:
	// lifted), and Reason why it changed.
	Pow    *rate.PowLevel `json:"pow,omitempty"`
	Reason string         `json:"reason,omitempty"`
	// Host and Name are the room as the proxies' file names it
	// (configured).
	Host string `json:"host,omitempty"`
	Name string `json:"name,omitempty"`
	// FileAt is when the proxy's file was modified (configured; 0:
	// unknown, Table.Offer).
	FileAt int64 `json:"fileAt,omitempty"`
	// Runtime is the runtime settings from now on, and Actor who changed
	// them (adjusted, runtime.go).
	Runtime *Runtime `json:"runtime,omitempty"`
	Actor   string   `json:"actor,omitempty"`
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
	// TypePow (powauto.go) changes the automatic proof of work.
)

// Encode returns the event's log encoding.
func (e *Event) Encode() ([]byte, error) {
	return versioned.Encode(e, &e.V, EventVersion)
}

// DecodeEvent parses an event from the log.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	err := versioned.Decode(b, &e, &e.V, EventVersion, "capacity event")
	return e, err
}
