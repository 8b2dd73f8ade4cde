package front

import "context"

// What the tests of package front_test, which run real nodes, see of the
// front's insides.

// Cached is the view held of room id, without asking its grain.
func (v *Views) Cached(id string) *Room { return v.cached(id) }

type (
	// Batcher is a client's join batcher.
	Batcher = batcher
	// JoinOutcome is a batch's answer.
	JoinOutcome = joinOutcome
)

// Batcher is c's join batcher.
func (c *Client) Batcher() *Batcher { return c.joins }

// Call is one grain call with its retries.
func (c *Client) Call(ctx context.Context, identity, kind, op string, req, out any) error {
	return c.call(ctx, identity, kind, op, req, out)
}

// Intercept sends every batch through f, which is given the batcher's own
// send.
func (b *batcher) Intercept(f func(send func(id string, count int) joinOutcome, id string, count int) joinOutcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	send := b.request
	b.send = func(id string, count int) joinOutcome { return f(send, id, count) }
}

// PendingIn is the number of joins gathered for room id.
func (b *batcher) PendingIn(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rb := b.rooms[id]; rb != nil {
		return len(rb.pending)
	}
	return 0
}

// Rooms is the number of rooms with joins gathered or on their way.
func (b *batcher) Rooms() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.rooms)
}

// SetMaxPending changes the bound of the joins gathered per room.
func (b *batcher) SetMaxPending(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.maxPending = n
}

// CircuitOpen reports whether room id's circuit is open.
func (b *batcher) CircuitOpen(id string) bool { return b.breaker.open(id) }

// JoinBatches, JoinsPending and JoinsRefused are the batcher's counters.
func (b *batcher) JoinBatches() int64 { return b.batches.Load() }

// JoinsPending is the joins gathered, in all rooms.
func (b *batcher) JoinsPending() int64 { return b.pending.Load() }

// JoinsRefused is the joins refused busy.
func (b *batcher) JoinsRefused() int64 { return b.refused.Load() }
