package node

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Order of joins (docs/architecture.md, "A join").
//
// A front node gathers the joins of one room that arrive while its previous
// batch for that room is on its way, or until batchWindow after it was
// sent, up to batchLimit, and asks the room's grain for that many numbers in
// one message. A join of a room that sent nothing for a window goes at
// once: a quiet room's visitor does not wait for company that is not
// coming, and a busy room sends at most one batch a window plus those that
// gathered while one was on its way. It keeps at most one batch per room on its way, so
// its batches reach the grain in the order they were formed, and it hands
// the consecutive numbers of a batch out in the order its visitors arrived:
// within one front node, first come is first served exactly.
//
// Across front nodes, order is the order in which their batches reach the
// grain. Two visitors who arrive at different fronts within the same window
// (about a millisecond, or one batch's round trip under load) are
// simultaneous: either may get the lower number. A visitor who arrived at
// any front after another visitor's batch was answered always gets a higher
// number than that visitor. No front can hold a visitor back for longer than
// one window plus one round trip, so the reordering is bounded by that, far
// below what any visitor can notice in a line that moves at a configured
// rate.
//
// Tickets are signed here, with the room's ticket key from the pushed view,
// so the grain does no per-visitor work but counting.

const (
	// batchWindow is how long the first join of an idle room waits for
	// others before its batch is sent.
	batchWindow = time.Millisecond
	// batchLimit sends a batch at once when it holds this many joins.
	batchLimit = 512
)

// batcher gathers joins per room on a front node.
type batcher struct {
	c       *Client
	breaker *breaker
	window  time.Duration
	limit   int
	// batches counts the batches sent to grains.
	batches atomic.Int64

	mu sync.Mutex
	// mu guards rooms and every roomBatch in it.
	rooms map[string]*roomBatch
}

// roomBatch is one room's gathering: joins not yet sent, whether a batch is
// on its way or a window timer runs, and when the last batch left. It is
// dropped once a window has passed with nothing to send.
type roomBatch struct {
	pending []*joinWait
	sending bool
	armed   bool
	last    time.Time
}

// joinWait is one visitor's join waiting for its number.
type joinWait struct {
	done chan joinOutcome // buffered: the sender never blocks
}

type joinOutcome struct {
	number uint64
	key    []byte
	view   *room.View
	err    error
}

func newBatcher(c *Client) *batcher {
	return &batcher{c: c, breaker: newBreaker(time.Now), window: batchWindow, limit: batchLimit,
		rooms: map[string]*roomBatch{}}
}

// join waits for one number of room id, gathered with the other joins of
// the room on this node.
func (b *batcher) join(ctx context.Context, id string) (*JoinResult, error) {
	w := &joinWait{done: make(chan joinOutcome, 1)}
	b.mu.Lock()
	rb := b.rooms[id]
	if rb == nil {
		rb = &roomBatch{}
		b.rooms[id] = rb
	}
	rb.pending = append(rb.pending, w)
	switch {
	case rb.sending:
		// Sent when the batch on its way comes back.
	case rb.armed && len(rb.pending) < b.limit:
		// Sent when the window since the last batch ends.
	default:
		// A full batch, or a room that sent nothing for a window.
		go b.run(id, rb, b.takeLocked(rb))
	}
	b.mu.Unlock()
	select {
	case o := <-w.done:
		if o.err != nil {
			return nil, o.err
		}
		tk, err := room.SignTicket(o.key, id, o.number)
		if err != nil {
			return nil, ErrRoomUnavailable
		}
		return &JoinResult{Number: o.number, Ticket: tk, View: *o.view}, nil
	case <-ctx.Done():
		// The number, if one comes, is lost like a visitor who left.
		return nil, ErrUnavailable
	}
}

// takeLocked takes up to limit pending joins of rb as one batch and marks
// rb as sending. b.mu must be held.
func (b *batcher) takeLocked(rb *roomBatch) []*joinWait {
	n := min(len(rb.pending), b.limit)
	batch := rb.pending[:n:n]
	rb.pending = append([]*joinWait(nil), rb.pending[n:]...)
	rb.sending, rb.last = true, time.Now()
	return batch
}

// armLocked starts the window timer of rb, which ends a window after its
// last batch left. b.mu must be held.
func (b *batcher) armLocked(id string, rb *roomBatch) {
	if b.window <= 0 {
		// No window to wait for: nothing left to keep.
		if b.rooms[id] == rb {
			delete(b.rooms, id)
		}
		return
	}
	if rb.armed {
		return
	}
	rb.armed = true
	time.AfterFunc(b.window-time.Since(rb.last), func() {
		// This is a goroutine of its own already: the batch is sent from
		// it, without a hop to another.
		b.mu.Lock()
		rb.armed = false
		switch {
		case rb.sending:
		case len(rb.pending) > 0:
			batch := b.takeLocked(rb)
			b.mu.Unlock()
			b.run(id, rb, batch)
			return
		case b.rooms[id] == rb:
			delete(b.rooms, id)
		}
		b.mu.Unlock()
	})
}

// run makes the batch's one cluster call and hands its numbers out in
// arrival order, then does the same, on the same goroutine, for each batch
// that gathered meanwhile, until none has.
func (b *batcher) run(id string, rb *roomBatch, batch []*joinWait) {
	for {
		b.deliver(batch, b.request(id, len(batch)))
		b.mu.Lock()
		if len(rb.pending) == 0 {
			rb.sending = false
			b.armLocked(id, rb)
			b.mu.Unlock()
			return
		}
		batch = b.takeLocked(rb)
		b.mu.Unlock()
	}
}

// request asks the grain for count numbers, or fails at once while the
// room's circuit is open.
func (b *batcher) request(id string, count int) joinOutcome {
	if b.c.logErr != nil && b.c.logErr() != nil {
		return joinOutcome{err: ErrLogUnavailable}
	}
	if !b.breaker.allow(id) {
		return joinOutcome{err: ErrLogUnavailable}
	}
	b.batches.Add(1)
	c := b.c
	req := JoinBatchRequest{Count: uint64(count)}
	r := c.views.cached(id)
	if r != nil && r.TicketKey != nil {
		req.Known, req.Epoch, req.Version = true, r.View.Epoch, r.View.Version
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var res JoinBatchResult
	err := c.call(ctx, id, KindRoom, opJoinBatch, req, &res)
	b.breaker.done(id, IsCode(err, CodeLogUnavailable))
	if err != nil {
		return joinOutcome{err: err}
	}
	if res.View != nil {
		c.views.offer(res.View)
		r = c.views.cached(id)
	}
	if r == nil || r.TicketKey == nil {
		return joinOutcome{err: ErrRoomUnavailable}
	}
	v := *r.View
	if v.Epoch == res.Epoch && v.Version == res.Version && res.Issued > v.Issued {
		// The answer is the room as it stood right after these numbers.
		v.Line, v.Issued = res.Line, res.Issued
		c.views.offer(&v)
	}
	return joinOutcome{number: res.First, key: r.TicketKey, view: &v}
}

// deliver hands consecutive numbers to the batch in arrival order.
func (b *batcher) deliver(batch []*joinWait, o joinOutcome) {
	for i, w := range batch {
		if o.err == nil {
			w.done <- joinOutcome{number: o.number + uint64(i), key: o.key, view: o.view}
			continue
		}
		w.done <- o
	}
}
