package room

import "math"

// JumpAfterRestore is how far a room's numbers jump when its log is
// restored from a backup taken elapsedSeconds before the restore: the
// numbers the image knows of (its highest reservation, or issue count) plus
// every number the lost node could have handed out since, at
// maxJoinsPerSecond. The lost node must have stopped by the time of the
// restore; a node that goes on serving from the old log is not bounded by
// any rule.
func (s *State) JumpAfterRestore(elapsedSeconds, maxJoinsPerSecond float64) uint64 {
	known := max(s.Reserved, s.Issued)
	lost := math.Ceil(max(elapsedSeconds, 0) * max(maxJoinsPerSecond, 0))
	if lost >= float64(math.MaxUint64-known) {
		return math.MaxUint64
	}
	return known + uint64(lost)
}

// DecideJump reserves every number up to upTo for the restored room, so
// that no number the lost node may have handed out after the backup is
// handed out again, and moves the line up to upTo: those numbers are
// ghosts, or visitors who joined after the backup, who are admitted at once
// rather than making everyone after them wait behind a gap nobody can
// measure. A room before its opening keeps its line (its pre-queue is
// drawn at the opening). Tickets and tokens from before stay valid: keys
// and secrets are untouched.
func (s *State) DecideJump(upTo uint64, now int64) []Event {
	e := s.event(TypeReserved, now, "")
	e.Reserved = &Reserved{UpTo: upTo}
	l := s.normalized(now).anchor(now, lineRate(&s.Config, s.Armed != nil))
	if s.Armed == nil && l.Base < float64(upTo) {
		l.Base = float64(upTo)
	}
	e.Line = &l
	return []Event{e}
}
