package grain

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// scheduler moves a room into the phase of its scheduled events as time
// passes: at each tick it asks the rules whether the phase in force is
// still the one of now, and when it is not, writes the change (a draw key
// ready, should a pre-queue begin). The change is then pushed to the
// front nodes like any other, in the view. At most one change is on its
// way.
type scheduler struct {
	pending bool
}

// tick queues the change of phase due at now, if any. The decision is
// taken again against the state when the write starts, so a change that
// an operator's write overtook writes nothing.
func (s *scheduler) tick(g *roomGrain, now time.Time) {
	if s.pending || !g.st.ScheduleDue(now.UnixNano()) {
		return
	}
	s.pending = true
	phase := room.PhaseAt(g.st.Base, now)
	dk := g.newDrawKey()
	g.writes.add(&task{kind: "schedule", decide: func(now int64) ([]room.Event, error) {
		return g.st.DecideSchedule(now, dk)
	}, done: func(err error) {
		s.pending = false
		if err != nil {
			g.log.Warn("change of the scheduled settings not written", "error", err)
			return
		}
		if g.st.Phase != phase {
			return // another write overtook it, or the draw came first
		}
		g.log.Info("scheduled settings in force", "event", g.st.Phase.Event, "stage", g.st.Phase.Stage,
			"mode", g.st.EffectiveMode(), "rate", g.st.Config.RatePerMinute)
	}})
}

// nextDue is the sooner of the opening and the next change of the
// scheduled settings: the ticker ticks quickly around it.
func (g *roomGrain) nextDue(now time.Time) time.Time {
	due, _ := g.st.OpeningDue()
	if next, ok := g.st.NextScheduled(now.UnixNano()); ok && (due.IsZero() || next.Before(due)) {
		return next
	}
	return due
}
