package grain

import (
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// A write asked for twice is applied once. Client.call gives every write
// one command id for all its attempts; a retry (the first attempt's answer
// was late) is answered by the first attempt's answer: at once when it is
// known, or together with it when the first attempt is still being
// written. The ids themselves are in the room's events and state
// (room.Commands), so a retry reaching the next activation after a crash
// finds its command applied too; only the answer, which may hold a secret
// shown once, is kept in memory alone.

// maxAnswers bounds the answers a room grain keeps for retries (oldest
// forgotten): the same bound as the ids in the state.
const maxAnswers = room.MaxCommands

// onceDesk is the room grain's memory of its latest commands' answers and
// of the commands being written.
type onceDesk struct {
	answers map[string]*wire.Response
	order   []string // ids of answers, oldest first
	// pending are the callers waiting for a command being written: the
	// first attempt's and its retries'.
	pending map[string][]reply
}

// again answers a retry of command id and reports whether it did: from the
// answers kept, or by joining the callers of a command being written.
func (d *onceDesk) again(id string, answer reply) bool {
	if id == "" {
		return false
	}
	if r, ok := d.answers[id]; ok {
		answer(r)
		return true
	}
	if w, ok := d.pending[id]; ok {
		d.pending[id] = append(w, answer)
		return true
	}
	return false
}

// track returns the reply that answers command id's callers and keeps the
// answer for a later retry. An answer that asks to try again (unavailable,
// busy) is not kept: the retry writes again, unless the command's events
// were applied meanwhile (room.State.Applied).
func (d *onceDesk) track(id string, answer reply) reply {
	if id == "" {
		return answer
	}
	if d.pending == nil {
		d.pending, d.answers = map[string][]reply{}, map[string]*wire.Response{}
	}
	d.pending[id] = []reply{answer}
	return func(r *wire.Response) {
		waiting := d.pending[id]
		delete(d.pending, id)
		if r.Code != protocol.CodeUnavailable && r.Code != protocol.CodeBusy {
			d.keep(id, r)
		}
		for _, a := range waiting {
			a(r)
		}
	}
}

// known reports whether command id is being written or was answered: its
// retry costs no room in the write queue.
func (d *onceDesk) known(id string) bool {
	_, answered := d.answers[id]
	_, writing := d.pending[id]
	return id != "" && (answered || writing)
}

func (d *onceDesk) keep(id string, r *wire.Response) {
	if len(d.order) >= maxAnswers {
		delete(d.answers, d.order[0])
		d.order = d.order[1:]
	}
	d.answers[id] = r
	d.order = append(d.order, id)
}

// stamped marks the events t writes with command id.
func stamped(t *task, id string) *task {
	if id == "" {
		return t
	}
	decide := t.decide
	t.decide = func(now int64) ([]room.Event, error) {
		evs, err := decide(now)
		room.Stamp(evs, id)
		return evs, err
	}
	return t
}

// appliedAnswer answers a retry of a command of op that an earlier
// activation applied and whose answer is lost: a redemption gets a fresh
// bypass token (the code's use was counted once); any other change says it
// was made, and the caller reads the room to see it.
func (g *roomGrain) appliedAnswer(op string) *wire.Response {
	if op == protocol.OpRedeem {
		return g.mint(0, true, g.now())
	}
	return &wire.Response{Code: protocol.CodeConflict, Message: "This change was already made; its answer was lost. Read the room to see it."}
}
