package front

import (
	"context"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// CapacityCheck asks capacity room id about visitor: a slot holder's slot
// is renewed, a waiter's check recorded (and the waiter let in when a slot
// is free for their place), a new visitor joins the line.
func (c *Client) CapacityCheck(ctx context.Context, id string, s capacity.Settings, visitor string) (capacity.Status, error) {
	var st capacity.Status
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapCheck, protocol.CapacityRequest{Settings: s, ID: visitor}, &st)
	return st, err
}

// CapacityArrive asks capacity room id about a visitor's first request
// (no cookie): in at once when nobody waits and a slot is free, otherwise
// a provisional place that costs no write, with an estimate of the place.
func (c *Client) CapacityArrive(ctx context.Context, id string, s capacity.Settings, visitor string) (capacity.Status, error) {
	var st capacity.Status
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapCheck, protocol.CapacityRequest{Settings: s, ID: visitor, First: true}, &st)
	return st, err
}

// CapacityConfirm is CapacityCheck for a visitor whose cookie says they
// first came at arrived (Unix nanoseconds): a provisional place becomes
// real in that order of arrival.
func (c *Client) CapacityConfirm(ctx context.Context, id string, s capacity.Settings, visitor string, arrived int64) (capacity.Status, error) {
	var st capacity.Status
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapCheck, protocol.CapacityRequest{Settings: s, ID: visitor, Arrived: arrived}, &st)
	return st, err
}

// CapacityRelease frees visitor's slot at once.
func (c *Client) CapacityRelease(ctx context.Context, id, visitor string) error {
	return c.call(ctx, id, protocol.KindCapacity, protocol.OpCapRelease, protocol.CapacityRequest{ID: visitor}, nil)
}

// CapacityKey returns room id's cookie key, sealed under the master key
// with the associated data CapacityKeyAD(id); the grain makes it on first
// use.
func (c *Client) CapacityKey(ctx context.Context, id string) ([]byte, error) {
	var sealed []byte
	err := c.call(ctx, id, protocol.KindCapacity, protocol.OpCapKey, protocol.CapacityRequest{}, &sealed)
	return sealed, err
}
