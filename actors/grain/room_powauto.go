package grain

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// powAuto applies a room's automatic proof of work (pow.auto): at each
// tick it hands the issued count to the pure controller (room.PowPressure)
// and writes the controller's change as a rate-log entry, which the view
// pushed to the front nodes then carries. The rate log and the live
// dashboard show it with its reason. At most one change is on its way.
type powAuto struct {
	pressure room.PowPressure
	pending  bool
}

// tick observes the room at now and queues a change when the controller
// decides one. The decision is taken again against the state when the
// write starts, so a change that another write overtook writes nothing.
func (a *powAuto) tick(g *roomGrain, now time.Time) {
	st := g.st
	if !st.Live() || (!st.Config.Pow.Auto && st.PowAuto == nil) {
		a.pressure = room.PowPressure{}
		return
	}
	at := now.UnixNano()
	a.pressure.Record(at, st.Issued)
	if a.pending {
		return
	}
	d := a.pressure.Decide(&st.Config, st.PowAuto, at)
	if !d.Changed {
		return
	}
	a.pending = true
	g.writes.add(&task{kind: "pow-auto", decide: func(now int64) ([]room.Event, error) {
		return g.st.DecidePowAuto(d, now), nil
	}, done: func(err error) {
		a.pending = false
		if err != nil {
			g.log.Warn("automatic proof of work change not written", "error", err, "reason", d.Reason)
		}
	}})
}
