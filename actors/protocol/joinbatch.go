package protocol

import "github.com/aditus-queue/aditus-queue/actors/room"

// JoinBatchRequest asks for Count numbers at once. Epoch and Version name
// the view the front holds (Known false: none); the answer carries the
// whole view only when the grain's differs.
type JoinBatchRequest struct {
	Count   uint64 `json:"count"`
	Known   bool   `json:"known,omitempty"`
	Epoch   int64  `json:"epoch,omitempty"`
	Version uint64 `json:"version,omitempty"`
}

// JoinBatchResult is numbers First … First+Count−1 with the room's line
// and issued count right after they were issued. View is set when the
// front's view was older.
type JoinBatchResult struct {
	First   uint64     `json:"first"`
	Count   uint64     `json:"count"`
	Epoch   int64      `json:"epoch"`
	Version uint64     `json:"version"`
	Line    room.Line  `json:"line"`
	Issued  uint64     `json:"issued"`
	View    *room.View `json:"view,omitempty"`
}
