package room

import (
	"errors"
	"math"
	"sort"
)

// A restore from a backup cannot know the numbers the lost node handed out
// after the backup was taken, so it makes them nobody's (docs/architecture.md,
// "Durability and fencing", backups):
//
//   - the room's numbers jump from the highest the image knows of (its
//     highest reservation) past all the lost node may have handed out;
//   - the numbers in the jump hold no place: places are counted without
//     them, so visitors waiting in the image keep their order, and those
//     who join after the restore follow them, at the room's rate;
//   - a ticket numbered in the jump that comes back (status, heartbeat,
//     token) is given a place the first time the room hears of it: the
//     next place at the end of the line, as a visitor joining at that
//     moment would get (Return). Until then it waits and is not admitted.
//
// A place is a number with every jump below it taken out; the line, the
// draws and abandon detection count places. A room never restored has no
// jump, and its places are its numbers.

// Jump is the numbers From+1 … To that a restore made nobody's.
type Jump struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// Restored records a restore's jump (Jump) and re-anchors the line.
type Restored struct {
	Jump
	// TakenAt is when the backup was taken (Unix nanoseconds).
	TakenAt int64 `json:"takenAt"`
}

// Returned gives jump number Number the place of number As, handed out
// for it when its ticket came back.
type Returned struct {
	Number uint64 `json:"number"`
	As     uint64 `json:"as"`
}

// MaxReturned bounds how many jump numbers may come back and be placed;
// beyond it Return refuses (ErrReturnsFull) and the visitor joins again.
const MaxReturned = 10_000

// Errors of Return.
var (
	ErrNotInJump   = errors.New("number not in a restore's jump")
	ErrReturnsFull = errors.New("too many numbers of the restore's jump came back")
)

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

// DecideJump makes the numbers above the image's highest up to upTo
// nobody's and reserves them, so that no number the lost node may have
// handed out after the backup is handed out again. The line stands where
// it stood when the backup was taken (takenAt) and runs on from now at the
// room's rate: nobody waiting in the image passes at once, and nobody who
// was admitted loses it. Tickets and tokens from before stay valid: keys
// and secrets are untouched.
func (s *State) DecideJump(upTo uint64, takenAt, now int64) []Event {
	from := max(s.Reserved, s.Issued)
	e := s.event(TypeRestored, now, "")
	e.Restored = &Restored{Jump: Jump{From: from, To: max(upTo, from)}, TakenAt: takenAt}
	at := min(takenAt, now)
	base := s.Line.capped(at, s.Cap()).At(at)
	e.Line = &Line{Base: math.Max(base, s.Line.Base), T0: now, Rate: lineRate(&s.Config, s.Armed != nil)}
	return []Event{e}
}

func (s *State) applyRestored(r *Restored) {
	if r.To > r.From && r.From >= s.lastJumpTo() {
		s.Jumps = append(s.Jumps, r.Jump)
	}
	s.Reserved = max(s.Reserved, r.To)
	s.Issued = max(s.Issued, r.To)
}

func (v *View) lastJumpTo() uint64 {
	if len(v.Jumps) == 0 {
		return 0
	}
	return v.Jumps[len(v.Jumps)-1].To
}

// Return places jump number n, whose ticket came back at now: it hands out
// the next number for it, like a join (ErrNeedBlock when none is reserved),
// and returns the event that records the place. A number already placed,
// or not in a jump, is ErrNotInJump.
func (s *State) Return(n uint64, now int64) ([]Event, error) {
	if err := s.joinable(); err != nil {
		return nil, err
	}
	if !s.Unplaced(n) {
		return nil, ErrNotInJump
	}
	if len(s.Returned) >= MaxReturned {
		return nil, ErrReturnsFull
	}
	if s.Issued >= s.Reserved {
		return nil, ErrNeedBlock
	}
	s.Line = s.normalized(now)
	s.Issued++
	e := s.event(TypeReturned, now, "")
	e.Returned = &Returned{Number: n, As: s.Issued}
	return []Event{e}, nil
}

func (s *State) applyReturned(r *Returned) {
	if !s.inJump(r.Number) || r.As <= s.lastJumpTo() {
		return
	}
	if s.Returned == nil {
		s.Returned = map[uint64]uint64{}
	}
	s.Returned[r.Number] = r.As
	s.Issued = max(s.Issued, r.As)
}

// inJump reports whether n is one of the numbers a restore made nobody's.
func (v *View) inJump(n uint64) bool {
	i := sort.Search(len(v.Jumps), func(i int) bool { return v.Jumps[i].To >= n })
	return i < len(v.Jumps) && n > v.Jumps[i].From
}

// Unplaced reports whether n is a jump number whose ticket has not come
// back yet: it holds no place.
func (v *View) Unplaced(n uint64) bool {
	if _, ok := v.Returned[n]; ok {
		return false
	}
	return v.inJump(n)
}

// compact returns n with every jump number at or below it taken out: the
// place of n when n is outside the jumps, the place before the jump when
// it is inside one.
func (v *View) compact(n uint64) uint64 {
	c := n
	for _, j := range v.Jumps {
		if n <= j.From {
			break
		}
		c -= min(n, j.To) - j.From
	}
	return c
}

// expand is the inverse of compact outside the jumps: the number of place c.
func (v *View) expand(c uint64) uint64 {
	n := c
	for _, j := range v.Jumps {
		if n <= j.From {
			break
		}
		n += j.To - j.From
	}
	return n
}

// placeOf returns number n's place before any draw, and false for a jump
// number not yet placed.
func (v *View) placeOf(n uint64) (uint64, bool) {
	if m, ok := v.Returned[n]; ok {
		n = m
	} else if v.inJump(n) {
		return 0, false
	}
	return v.compact(n), true
}

// Places is the number of places handed out: the issued count without the
// numbers of every jump.
func (v *View) Places() uint64 { return v.compact(v.Issued) }

// PlaceOf is number n's place before any draw, the key of presence
// (abandon detection); false for a jump number not yet placed.
func (v *View) PlaceOf(n uint64) (uint64, bool) { return v.placeOf(n) }
