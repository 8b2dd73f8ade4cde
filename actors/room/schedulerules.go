package room

import (
	"fmt"
	"time"
)

// ActorSchedule is the audit actor of the changes the room's events make
// as time passes.
const ActorSchedule = "schedule"

// ScheduleDue reports whether the phase of the room's events at now is
// not the one in force: the grain then draws a key (a pre-queue may begin)
// and writes DecideSchedule. While a due draw is not yet made (it may wait
// for its beacon round) the change waits for it, so an event ending
// meanwhile does not drop its pre-queue.
func (s *State) ScheduleDue(now int64) bool {
	return s.Live() && s.Base != nil && PhaseAt(s.Base, time.Unix(0, now)) != s.Phase && !s.openingDue(now)
}

// NextScheduled is the next instant the room's events change its
// settings, if any; the grain ticks quickly around it.
func (s *State) NextScheduled(now int64) (time.Time, bool) {
	if !s.Live() || s.Base == nil {
		return time.Time{}, false
	}
	return NextChange(s.Base, time.Unix(0, now))
}

// DecideSchedule moves the room into the phase of its events at now: the
// operator's configuration, unchanged, written with the new phase, so the
// line, the mode and the draw follow the overrides in force exactly as
// when the operator sets them (a rate change keeps serving continuous, a
// pre-queue arms the draw with dk). Nothing unless ScheduleDue.
func (s *State) DecideSchedule(now int64, dk DrawKey) ([]Event, error) {
	if !s.ScheduleDue(now) {
		return nil, nil
	}
	return s.configure(*s.Base, PhaseAt(s.Base, time.Unix(0, now)), now, ActorSchedule, dk)
}

// phaseDetail is the audit detail of a change into phase p of c.
func phaseDetail(c *Config, p Phase) string {
	if p.Event < 1 || p.Event > len(c.Events) {
		return "the room's own settings"
	}
	e := &c.Events[p.Event-1]
	name := fmt.Sprintf("events[%d]", p.Event-1)
	if e.Name != "" {
		name += " " + e.Name
	}
	switch p.Stage {
	case StagePrequeue:
		return name + ": pre-queue until " + e.StartsAt.UTC().Format(time.RFC3339)
	case StageAfter:
		return name + ": ended, mode " + e.EndMode
	}
	return name + ": live until " + e.EndsAt.UTC().Format(time.RFC3339)
}
