package grain

import (
	"errors"
	"slices"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// maxPendingReturns bounds the jump numbers (actors/room/restore.go) whose
// tickets came back and wait for the write that places them; beyond it a
// report is dropped and the ticket's next status places it.
const maxPendingReturns = 4096

// placeReturns queues the placing of every number in numbers that a
// restore made nobody's and whose ticket has now come back: each takes
// the next place at the end of the line, in the order the grain hears of
// them.
func (g *roomGrain) placeReturns(numbers []uint64) {
	for _, n := range numbers {
		if !g.st.Unplaced(n) || slices.Contains(g.returns, n) {
			continue
		}
		if len(g.returns) >= maxPendingReturns {
			g.refuseReturn()
			continue
		}
		g.returns = append(g.returns, n)
	}
	if len(g.returns) == 0 || g.returning {
		return
	}
	g.returning = true
	g.writes.add(&task{kind: "return", decide: func(now int64) ([]room.Event, error) {
		var evs []room.Event
		for len(g.returns) > 0 {
			e, err := g.st.Return(g.returns[0], now)
			if errors.Is(err, room.ErrNeedBlock) {
				break
			}
			if errors.Is(err, room.ErrReturnsFull) {
				g.refuseReturn()
			}
			g.returns = g.returns[1:]
			evs = append(evs, e...)
		}
		return evs, nil
	}, done: func(err error) {
		g.returning = false
		if err != nil {
			// Their tickets' next reports place them.
			g.returns = nil
			return
		}
		if len(g.returns) > 0 {
			// The block ran out: reserve, and place the rest after it.
			g.reserve()
			g.placeReturns(nil)
		}
	}})
}

func (g *roomGrain) refuseReturn() {
	if m := g.deps.Metrics; m != nil {
		m.ReturnsRefused.Inc()
	}
}
