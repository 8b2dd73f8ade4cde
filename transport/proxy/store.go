package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	frontside "github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// Store is where capacity rooms are counted: the rooms' grains on the
// cluster. Every call is bounded by its context.
type Store interface {
	// Check renews a slot holder, records a waiter's check (letting them
	// in when a slot is free for their place) or puts a new visitor in
	// line, and tells where the visitor stands.
	Check(ctx context.Context, room string, s capacity.Settings, visitor string) (capacity.Status, error)
	// Arrive is a first request (the visitor has no cookie): in at once
	// when nobody waits and a slot is free, otherwise a provisional place
	// that nobody's position counts and nothing records (the status says
	// Provisional, with an estimate).
	Arrive(ctx context.Context, room string, s capacity.Settings, visitor string) (capacity.Status, error)
	// Confirm is Check for a visitor whose cookie says they first came at
	// arrived (Unix nanoseconds): a provisional place becomes real in that
	// order when it comes back within one refresh interval and a margin.
	Confirm(ctx context.Context, room string, s capacity.Settings, visitor string, arrived int64) (capacity.Status, error)
	// Touch renews the slots of visitors seen active (one batch), reports
	// the first requests answered with a proof-of-work challenge since the
	// last batch, this node's figures and the room as its file has it; it
	// returns what the node enforces now: the work new arrivals must solve
	// (bits, 0: none) and the settings in force with their runtime
	// version.
	Touch(ctx context.Context, room string, t protocol.CapacityTouch) (protocol.CapacityTouchAnswer, error)
	// Release frees a visitor's slot at once.
	Release(ctx context.Context, room, visitor string) error
	// Key returns the room's cookie key (32 bytes), made on first use, or
	// an error wrapping ErrKeyUnusable when the key was read but this node
	// cannot open it.
	Key(ctx context.Context, room string) ([]byte, error)
}

// ErrKeyUnusable is a room's cookie key that this node cannot open (its
// master key is not the cluster's): a fault of the configuration, not an
// outage of the store, so the room stays closed whatever on_store_error
// says.
var ErrKeyUnusable = errors.New("room key cannot be opened with this node's master key")

// Opener opens secrets sealed under the node master key.
type Opener interface {
	Open(sealed, associatedData []byte) ([]byte, error)
}

// ClusterStore is the Store of a node: the capacity grains, reached
// through the node's client. The cookie key travels sealed and is opened
// here with the master key.
type ClusterStore struct {
	Client *frontside.Client
	Opener Opener
}

// Check implements Store.
func (s ClusterStore) Check(ctx context.Context, room string, set capacity.Settings, visitor string) (capacity.Status, error) {
	return s.Client.CapacityCheck(ctx, room, set, visitor)
}

// Arrive implements Store.
func (s ClusterStore) Arrive(ctx context.Context, room string, set capacity.Settings, visitor string) (capacity.Status, error) {
	return s.Client.CapacityArrive(ctx, room, set, visitor)
}

// Confirm implements Store.
func (s ClusterStore) Confirm(ctx context.Context, room string, set capacity.Settings, visitor string, arrived int64) (capacity.Status, error) {
	return s.Client.CapacityConfirm(ctx, room, set, visitor, arrived)
}

// Touch implements Store.
func (s ClusterStore) Touch(ctx context.Context, room string, t protocol.CapacityTouch) (protocol.CapacityTouchAnswer, error) {
	return s.Client.CapacityTouch(ctx, room, t)
}

// Release implements Store.
func (s ClusterStore) Release(ctx context.Context, room, visitor string) error {
	return s.Client.CapacityRelease(ctx, room, visitor)
}

// Key implements Store.
func (s ClusterStore) Key(ctx context.Context, room string) ([]byte, error) {
	sealed, err := s.Client.CapacityKey(ctx, room)
	if err != nil {
		return nil, err
	}
	k, err := s.Opener.Open(sealed, protocol.CapacityKeyAD(room))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyUnusable, err)
	}
	return k, nil
}

var _ Store = ClusterStore{}
