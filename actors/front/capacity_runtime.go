package front

import (
	"context"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// CapacityTouch renews the slots of visitors seen active (one batch),
// reports the first requests answered with a challenge since the last
// batch and this node's report, and tells the room the file's settings
// this node runs it with. The answer is what the node enforces now.
func (c *Client) CapacityTouch(ctx context.Context, id string, t protocol.CapacityTouch) (protocol.CapacityTouchAnswer, error) {
	var a protocol.CapacityTouchAnswer
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapTouch, protocol.CapacityRequest{IDs: t.Visitors, Challenged: t.Challenged,
		Settings: t.Settings, Host: t.Host, Name: t.Name, FileAt: t.FileAt, Report: t.Report}, &a)
	return a, err
}

// CapacityState reads capacity room id's state.
func (c *Client) CapacityState(ctx context.Context, id string) (protocol.CapacityState, error) {
	var st protocol.CapacityState
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapState, protocol.CapacityRequest{}, &st)
	return st, err
}

// CapacityAdjust changes capacity room id's runtime settings as actor
// (checked against a.Version) and returns the state after the change.
func (c *Client) CapacityAdjust(ctx context.Context, id string, a capacity.Adjust, actor string) (protocol.CapacityState, error) {
	var st protocol.CapacityState
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapAdjust, protocol.CapacityRequest{Adjust: &a, Actor: actor}, &st)
	return st, err
}

// CapacityAnnounce tells the index the capacity rooms a proxy node serves.
func (c *Client) CapacityAnnounce(ctx context.Context, rooms []protocol.CapacityRoom) error {
	return c.call(ctx, protocol.CapacityIndexID, protocol.KindCapacityIndex, protocol.OpCapAnnounce, rooms, nil)
}

// CapacityRooms lists the capacity rooms announced within
// protocol.CapacityIndexTTL.
func (c *Client) CapacityRooms(ctx context.Context) (protocol.CapacityList, error) {
	var l protocol.CapacityList
	err := c.call(ctx, protocol.CapacityIndexID, protocol.KindCapacityIndex, protocol.OpCapList, struct{}{}, &l)
	return l, err
}
