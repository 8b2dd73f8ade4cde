package front

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Order of joins (docs/architecture.md, "A join").
//
// A front node batches the joins of one room naturally: a join of a room
// with nothing on its way to the grain is sent at once, with the joins
// that are ready at that instant (it yields the processor once, so that
// requests already being handled reach the room; on an idle node that
// costs nothing); joins that arrive while a batch is on its way gather,
// and go together, up to batchLimit, the moment it comes back. No join waits for a timer: a quiet
// room's visitor waits one round trip, and under load each batch holds what
// arrived during the previous one's round trip, so batches grow with the
// load and the grain's work per visitor shrinks with them. A front keeps
// at most one batch per room on its way, so its batches reach the grain in
// the order they were formed, and it hands the consecutive numbers of a
// batch out in the order its visitors arrived: within one front node,
// first come is first served exactly.
//
// Across front nodes, order is the order in which their batches reach the
// grain. Two visitors who arrive at different fronts within one batch's
// round trip are simultaneous: either may get the lower number. A visitor
// who arrived at any front after another visitor's batch was answered
// always gets a higher number than that visitor. No front holds a visitor
// back for longer than the round trip of the batch before, far below what
// any visitor can notice in a line that moves at a configured rate.
//
// The joins gathered for one room are bounded (maxPendingJoins): beyond
// it a join is refused at once with CodeBusy (503 with Retry-After), so a
// flood costs the flooder a refusal instead of the front its memory.
//
// Tickets are signed here, with the room's ticket key from the pushed view,
// so the grain does no per-visitor work but counting.

const (
	// batchLimit bounds one batch; the joins beyond it go in the next.
	batchLimit = 512
	// maxPendingJoins bounds the joins of one room gathered on a front
	// while its batch is on its way.
	maxPendingJoins = 8192
)

// batcher gathers joins per room on a front node.
type batcher struct {
	c       *Client
	breaker *breaker
	limit   int
	// maxPending bounds each room's gathered joins.
	maxPending int
	// send asks the grain for a batch's numbers (request; tests wrap it
	// to hold a batch on its way).
	send func(id string, count int) joinOutcome
	// batches counts the batches sent to grains; refused the joins
	// refused as busy; pending the joins gathered in all rooms.
	batches atomic.Int64
	refused atomic.Int64
	pending atomic.Int64

	mu sync.Mutex
	// mu guards rooms and every roomBatch in it.
	rooms map[string]*roomBatch
	// waits recycles the joinWaits that were answered and read.
	waits sync.Pool
}

// roomBatch is one room's gathering: joins not yet sent and whether a batch
// is on its way. It is dropped when a batch comes back and nothing
// gathered meanwhile.
type roomBatch struct {
	pending []*joinWait
	// spare is the slice of the batch on its way, reused for the next
	// gathering once that batch is answered.
	spare   []*joinWait
	sending bool
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
	b := &batcher{c: c, breaker: newBreaker(time.Now), limit: batchLimit, maxPending: maxPendingJoins,
		rooms: map[string]*roomBatch{}}
	b.send = b.request
	b.waits.New = func() any { return &joinWait{done: make(chan joinOutcome, 1)} }
	return b
}

// join waits for one number of room id, gathered with the other joins of
// the room on this node.
func (b *batcher) join(ctx context.Context, id string) (*protocol.JoinResult, error) {
	w := b.waits.Get().(*joinWait)
	rb, first, err := b.enqueue(id, w)
	if err != nil {
		b.waits.Put(w)
		return nil, err
	}
	if first {
		b.sendFirst(id, rb)
	}
	select {
	case o := <-w.done:
		b.waits.Put(w)
		if o.err != nil {
			return nil, o.err
		}
		tk, err := room.SignTicket(o.key, id, o.number)
		if err != nil {
			return nil, protocol.ErrRoomUnavailable
		}
		return &protocol.JoinResult{Number: o.number, Ticket: tk, View: *o.view}, nil
	case <-ctx.Done():
		// A gathered visitor who gives up loses the number, if one comes,
		// like a visitor who left; w is not reused, as its answer may
		// still come. (The visitor whose join went at once waited for its
		// batch in sendFirst, which the call timeout bounds.)
		return nil, protocol.ErrUnavailable
	}
}

// enqueue puts w in line for room id, or refuses it busy at the bound.
// first reports that nothing was on its way for the room: the caller
// sends the batch (sendFirst), which enqueue has marked as sending.
func (b *batcher) enqueue(id string, w *joinWait) (rb *roomBatch, first bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rb = b.rooms[id]
	if rb == nil {
		rb = &roomBatch{}
		b.rooms[id] = rb
	}
	if len(rb.pending) >= b.maxPending {
		b.refused.Add(1)
		return nil, false, protocol.ErrJoinsBusy
	}
	rb.pending = append(rb.pending, w)
	b.pending.Add(1)
	first = !rb.sending
	rb.sending = true
	return rb, first, nil
}

// sendFirst sends the batch of a room that had nothing on its way, from
// the joining goroutine, and hands the batches that gather meanwhile to
// another goroutine when its own is back. It first lets the goroutines
// ready to run go ahead (no timer: on an idle node there are none), so
// that the joins that arrived with this one go with it.
func (b *batcher) sendFirst(id string, rb *roomBatch) {
	runtime.Gosched()
	b.mu.Lock()
	batch := b.takeLocked(rb)
	b.mu.Unlock()
	if next := b.runOnce(id, rb, batch); next != nil {
		go b.run(id, rb, next)
	}
}

// takeLocked takes up to limit pending joins of rb as one batch and marks
// rb as sending. b.mu must be held.
func (b *batcher) takeLocked(rb *roomBatch) []*joinWait {
	n := min(len(rb.pending), b.limit)
	batch := rb.pending[:n]
	if n == len(rb.pending) {
		// All of it: the next gathering goes in the spare slice.
		rb.pending, rb.spare = rb.spare[:0], nil
	} else {
		rest := append(rb.spare[:0], rb.pending[n:]...)
		rb.pending, rb.spare = rest, nil
	}
	rb.sending = true
	b.pending.Add(-int64(n))
	return batch
}

// run makes the batch's one cluster call and hands its numbers out in
// arrival order, then does the same, on the same goroutine, for each batch
// that gathered meanwhile, until none has.
func (b *batcher) run(id string, rb *roomBatch, batch []*joinWait) {
	for batch != nil {
		batch = b.runOnce(id, rb, batch)
	}
}

// runOnce sends one batch and hands its numbers out, and returns the next
// batch, taken from the joins that gathered meanwhile, or nil when none
// has (the room then has nothing on its way).
func (b *batcher) runOnce(id string, rb *roomBatch, batch []*joinWait) []*joinWait {
	b.deliver(batch, b.send(id, len(batch)))
	clear(batch)
	b.mu.Lock()
	defer b.mu.Unlock()
	rb.spare = batch[:0]
	if len(rb.pending) == 0 {
		rb.sending = false
		if b.rooms[id] == rb {
			delete(b.rooms, id)
		}
		return nil
	}
	return b.takeLocked(rb)
}

// request asks the grain for count numbers, or fails at once while the
// room's circuit is open.
func (b *batcher) request(id string, count int) joinOutcome {
	if b.c.logErr != nil && b.c.logErr() != nil {
		return joinOutcome{err: protocol.ErrLogUnavailable}
	}
	if !b.breaker.allow(id) {
		return joinOutcome{err: protocol.ErrLogUnavailable}
	}
	b.batches.Add(1)
	c := b.c
	req := protocol.JoinBatchRequest{Count: uint64(count)}
	r := c.views.cached(id)
	if r != nil && r.TicketKey != nil {
		req.Known, req.Epoch, req.Version = true, r.View.Epoch, r.View.Version
	}
	// Without a deadline of its own the call is bounded by the client's
	// timeout, and costs no timer and channel of a context.
	var res protocol.JoinBatchResult
	err := c.call(context.Background(), id, protocol.KindRoom, protocol.OpJoinBatch, req, &res)
	b.breaker.done(id, protocol.IsCode(err, protocol.CodeLogUnavailable))
	if err != nil {
		return joinOutcome{err: err}
	}
	if res.View != nil {
		c.views.offer(res.View)
		r = c.views.cached(id)
	}
	if r == nil || r.TicketKey == nil {
		return joinOutcome{err: protocol.ErrRoomUnavailable}
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
