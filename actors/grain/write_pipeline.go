package grain

import (
	"fmt"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// task is one queued write: decide computes its events against the state
// as it is when the write starts (so concurrent redemptions cannot both pass
// a usage limit), done answers the caller after the events are verified and
// applied.
type task struct {
	decide func(now int64) ([]room.Event, error)
	done   func(err error)
	kind   string
}

// DefaultWriteQueue bounds a room grain's queue of writes asked for by
// callers, unless the node is configured otherwise (Deps.WriteQueue).
const DefaultWriteQueue = 10_000

// writePipeline is the room grain's queue of writes and the journal they go
// through. Writes run strictly one after another, so each read-back covers
// the writes before it, in order. Writes asked for by callers are bounded
// by limit; the grain's own (a reservation, a checkpoint, an opening, an
// abandon scan, a rate adjustment) are never refused, and at most one of
// each kind is queued. It is used only from the grain's Receive;
// the write itself runs elsewhere (start) and its outcome comes back to
// finish.
type writePipeline struct {
	j       journal
	limit   int
	queue   []*task
	writing bool
	// stopped is why the pipeline stopped (nil while it runs).
	stopped error
	now     func() int64
	// start runs one fenced write of data, read back from offset from, off
	// the grain's goroutine; its outcome must come back to finish.
	start func(t *task, from int64, data [][]byte)
}

// full reports whether a write asked for by a caller would be refused.
func (p *writePipeline) full() bool {
	limit := p.limit
	if limit <= 0 {
		limit = DefaultWriteQueue
	}
	return len(p.queue) >= limit
}

// submit queues a write asked for by a caller, or returns why it cannot
// (ErrBusy beyond the bound); t is answered only when it was queued.
func (p *writePipeline) submit(t *task) error {
	if p.stopped != nil {
		return p.stopped
	}
	if p.full() {
		return protocol.ErrBusy
	}
	p.queue = append(p.queue, t)
	p.pump()
	return nil
}

// add queues a write of the grain's own upkeep (checkpoint, opening,
// abandon scan, rate adjustment). Each kind has at most one in the queue.
func (p *writePipeline) add(t *task) {
	if p.stopped != nil {
		t.done(p.stopped)
		return
	}
	p.queue = append(p.queue, t)
	p.pump()
}

// first queues a block reservation ahead of every other write: joins wait
// on it. At most one is on its way.
func (p *writePipeline) first(t *task) {
	if p.stopped != nil {
		t.done(p.stopped)
		return
	}
	p.queue = append([]*task{t}, p.queue...)
	p.pump()
}

// busy reports whether a write is in flight or queued.
func (p *writePipeline) busy() bool { return p.writing || len(p.queue) > 0 }

// pump starts the next queued write unless one is in flight. A task whose
// decision fails, or whose events cannot be encoded, is answered at once
// and the next one decides.
func (p *writePipeline) pump() {
	for !p.writing && len(p.queue) > 0 && p.stopped == nil {
		t := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		evs, err := t.decide(p.now())
		if err != nil {
			t.done(err)
			continue
		}
		data, err := encodeEvents(evs)
		if err != nil {
			t.done(err)
			continue
		}
		p.writing = true
		p.start(t, p.j.verified, data)
	}
}

func encodeEvents(evs []room.Event) ([][]byte, error) {
	data := make([][]byte, 0, len(evs))
	for i := range evs {
		b, err := evs[i].Encode()
		if err != nil {
			return nil, fmt.Errorf("encode event: %w", err)
		}
		data = append(data, b)
	}
	return data, nil
}

// finish takes the outcome of the write in flight: it hands every record
// read back to apply, in order, answers t and starts the next write. It
// returns how many records were applied, ErrLogUnavailable (wrapped) when
// the write failed, and ErrSuperseded, having applied nothing from the
// newer activation's marker on and started nothing, when another
// activation owns the stream: the grain must stop.
func (p *writePipeline) finish(res appended, t *task, apply func(offset int64, data []byte)) (int, error) {
	p.writing = false
	if res.err != nil {
		err := fmt.Errorf("%w: %v", protocol.ErrLogUnavailable, res.err)
		t.done(err)
		p.pump()
		return 0, err
	}
	for _, r := range res.records {
		if p.j.foreignMarker(r.Offset, r.Data) {
			t.done(protocol.ErrSuperseded)
			return 0, protocol.ErrSuperseded
		}
		apply(r.Offset, r.Data)
	}
	p.j.verified = res.last
	t.done(nil)
	p.pump()
	return len(res.records), nil
}

// stop answers every queued write with err, and every later one.
func (p *writePipeline) stop(err error) {
	p.stopped = err
	for _, t := range p.queue {
		t.done(err)
	}
	p.queue = nil
}
