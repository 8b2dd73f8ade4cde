package protocol

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
)

// KindCapacity is the grain kind of capacity rooms (seed 004): one grain
// per proxied host and room name, holding the slot table in its own stream.
const KindCapacity = "capacity"

// Operations of the capacity grain.
const (
	OpCapCheck   = "cap-check"
	OpCapTouch   = "cap-touch"
	OpCapRelease = "cap-release"
	OpCapKey     = "cap-key"
)

// CapacityID is the grain identity (and log stream) of the capacity room
// name on host. The name is hashed so any host and name make a valid id.
func CapacityID(host, name string) string {
	h := sha256.Sum256([]byte(host + "\x00" + name))
	return "c" + hex.EncodeToString(h[:10])
}

// CapacityRequest is the body of every capacity grain operation.
type CapacityRequest struct {
	// Settings are the proxy's settings of the room; a check with other
	// settings than the room's reconfigures it (proxies of one room should
	// share them).
	Settings capacity.Settings `json:"settings"`
	// ID is the visitor (check, release).
	ID string `json:"id,omitempty"`
	// First marks a check of a visitor without a cookie: a provisional
	// place, written nowhere (capacity.Table.Arrive).
	First bool `json:"first,omitempty"`
	// Arrived is when a visitor with a provisional place first came, as
	// their cookie says: their return confirms the place in that order
	// (capacity.Table.Confirm).
	Arrived int64 `json:"arrived,omitempty"`
	// IDs are the visitors seen active since the last batch (touch).
	IDs []string `json:"ids,omitempty"`
	// Challenged counts the first requests a proxy node answered with a
	// proof-of-work challenge since its last batch (touch): arrivals the
	// automatic proof of work counts.
	Challenged uint64 `json:"challenged,omitempty"`
	// Host and Name are the room as the proxy's file names it; Report
	// the proxy node's figures (touch).
	Host   string               `json:"host,omitempty"`
	Name   string               `json:"name,omitempty"`
	Report *capacity.NodeReport `json:"report,omitempty"`
	// FileAt is when the proxy's file was modified (touch; Unix
	// nanoseconds, 0: unknown): the newest file's settings are the room's
	// (capacity.Table.Offer).
	FileAt int64 `json:"fileAt,omitempty"`
	// Adjust is an operator's change, and Actor who makes it (adjust).
	Adjust *capacity.Adjust `json:"adjust,omitempty"`
	Actor  string           `json:"actor,omitempty"`
}
