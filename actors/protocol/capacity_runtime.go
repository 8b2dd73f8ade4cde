package protocol

import (
	"encoding/hex"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// Operations of the capacity grain for the console and the admin API: its
// state, and an operator's change of its runtime settings.
const (
	OpCapState  = "cap-state"
	OpCapAdjust = "cap-adjust"
)

// IsCapacityID reports whether stream (or a grain identity) names a
// capacity room (CapacityID).
func IsCapacityID(stream string) bool {
	if len(stream) != 21 || stream[0] != 'c' {
		return false
	}
	_, err := hex.DecodeString(stream[1:])
	return err == nil
}

// CapacityState is a capacity room as the console shows it.
type CapacityState struct {
	ID   string `json:"id"`
	Host string `json:"host"`
	Name string `json:"name"`
	// Settings are in force; File what the proxies' HCL file says;
	// Runtime what an operator changed over it, and Differs the settings
	// that differ from the file because of it.
	Settings capacity.Settings `json:"settings"`
	File     capacity.Settings `json:"file"`
	Runtime  capacity.Runtime  `json:"runtime"`
	Differs  []string          `json:"differs"`
	capacity.Figures
	// Refusals sums the address-budget refusals the nodes reported.
	Refusals uint64                `json:"refusals"`
	Nodes    []capacity.NodeReport `json:"nodes"`
	Audit    []capacity.AuditEntry `json:"audit"`
}

// CapacityTouchAnswer is the answer to a renewal batch: what the proxy
// node enforces itself, learnt every batch.
type CapacityTouchAnswer struct {
	// Pow is the proof of work new arrivals must solve now, in bits.
	Pow int `json:"pow,omitempty"`
	// Settings are in force (the file's with the runtime's changes), and
	// Version the runtime version they come from.
	Settings capacity.Settings `json:"settings"`
	Version  int64             `json:"version,omitempty"`
	Paused   bool              `json:"paused,omitempty"`
	Open     bool              `json:"open,omitempty"`
	// Figures are the room's gauges, for the node's /metrics.
	Figures capacity.Figures `json:"figures"`
}

// CapacityTouch is one renewal batch of a proxy node.
type CapacityTouch struct {
	Visitors   []string
	Challenged uint64
	// Settings, Host and Name are the room as the node's file has it,
	// FileAt when the file was modified (0: unknown).
	Settings   capacity.Settings
	Host, Name string
	FileAt     int64
	Report     *capacity.NodeReport
}

// The list of capacity rooms: a singleton grain (identity CapacityIndexID)
// that every proxy node tells, every AnnounceInterval, the capacity rooms
// its file has. The console lists capacity rooms from it.
//
// Soft state, as the instances registry: the rooms' own state is in their
// logs, and a member that takes the index over after a fail-over knows
// every served room again one announcement later. A room no proxy has
// announced for CapacityIndexTTL drops out of the list (its log stays).
const (
	KindCapacityIndex = "capacity-index"
	CapacityIndexID   = "capacity-rooms"
	OpCapAnnounce     = "cap-announce"
	OpCapList         = "cap-list"
	// CapacityIndexTTL is how long a room stays listed unannounced.
	CapacityIndexTTL = 24 * time.Hour
	// MaxCapacityRooms bounds the list; a room past it is refused (and
	// counted) until another drops out.
	MaxCapacityRooms = 1024
	// AnnounceInterval is how often a proxy node announces its rooms.
	AnnounceInterval = 3 * time.Second
)

// CapacityRoom is one entry of the list.
type CapacityRoom struct {
	ID   string `json:"id"`
	Host string `json:"host"`
	Name string `json:"name"`
	// Seen is when a proxy node last announced it.
	Seen time.Time `json:"seen"`
}

// CapacityList is the list and how many announcements it refused.
type CapacityList struct {
	Rooms   []CapacityRoom `json:"rooms"`
	Refused uint64         `json:"refused"`
}
