package room

import (
	"math"
	"time"
)

// Abandon detection (docs/architecture.md, invariant 7). A number silent
// for longer than the grace period counts as abandoned; each abandoned
// number just ahead of the admission window moves the window one further,
// so the slot goes to somebody still waiting. It never revokes: a
// returning visitor whose position is inside the window is admitted like
// anybody else.
//
// Presence is not in the log: it would be one record per heartbeat. The
// grain keeps it in memory (Presence), and after a restart counts every
// waiting number as seen at the recovery, which can only delay detection.

// MaxAbandonScan bounds how many positions one DecideAbandon examines, so a
// scan of a very fast room stays short; the next scan goes on from there.
const MaxAbandonScan = 1 << 17

// Presence is the grain's memory of when each waiting number was last seen
// (heartbeat, socket, or its join): four bytes per number that no scan has
// examined yet. It counts places (View.PlaceOf): a number with the numbers
// of a restore's jump taken out, so the jump costs no memory. Numbers behind the scan cursor are dropped as the window
// passes. The zero value is not ready; use NewPresence. Not safe for
// concurrent use: it lives in the grain.
type Presence struct {
	// offset is the number seen[0] stands for.
	offset uint64
	// seen holds Unix seconds; 0 means not seen in this activation.
	seen []uint32
	// floor is when every number counts as seen at the latest: the
	// activation, or the moment detection was switched on.
	floor uint32
	// cursor is the highest position examined without finding anything to
	// write (the log's cursor, State.AbandonScan, covers the rest).
	cursor uint64
	// dead counts entries dropped off the front of seen since it was last
	// copied; their memory is still held by the array.
	dead int
}

// NewPresence returns the presence memory of room s recovered at now:
// every number issued so far counts as seen at now (conservative: a restart
// can delay detection, never hasten it).
func NewPresence(s *State, now int64) *Presence {
	p := &Presence{floor: unixSeconds(now), cursor: max(s.AbandonScan, s.Serving(now))}
	p.offset = s.firstUnexamined(p.cursor)
	return p
}

func unixSeconds(t int64) uint32 {
	s := t / int64(time.Second)
	if s <= 0 {
		return 0
	}
	if s > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(s)
}

// Seen records that number n was present at now. A join is the first
// sighting. Numbers already examined are ignored. The caller passes only
// issued numbers: memory grows to the highest number seen.
func (p *Presence) Seen(n uint64, now int64) {
	if n < p.offset || n == 0 {
		return
	}
	i := n - p.offset
	if i >= uint64(len(p.seen)) {
		p.seen = append(p.seen, make([]uint32, int(i)+1-len(p.seen))...)
	}
	if s := unixSeconds(now); s > p.seen[i] {
		p.seen[i] = s
	}
}

// LastSeen returns when number n was last seen, in Unix seconds.
func (p *Presence) LastSeen(n uint64) uint32 {
	s := p.floor
	if n >= p.offset && n-p.offset < uint64(len(p.seen)) && p.seen[n-p.offset] > s {
		s = p.seen[n-p.offset]
	}
	return s
}

// Forget drops everything seen and counts every number as seen at now. The
// grain calls it while detection is off (nobody reports presence then), so
// that switching it on mid-sale does not take the whole queue for gone.
func (p *Presence) Forget(v *View, now int64) {
	p.floor = unixSeconds(now)
	p.seen, p.dead = nil, 0
	if s := v.Serving(now); s > p.cursor {
		p.cursor = s
	}
	p.offset = v.firstUnexamined(p.cursor)
}

// Cursor is the highest position examined so far by this activation.
func (p *Presence) Cursor() uint64 { return p.cursor }

// Examined records that every position up to cursor has been examined, and
// frees the memory of numbers that no later scan can ask about.
func (p *Presence) Examined(v *View, cursor uint64) {
	if cursor > p.cursor {
		p.cursor = cursor
	}
	low := v.firstUnexamined(p.cursor)
	if low <= p.offset {
		return
	}
	drop := low - p.offset
	p.offset = low
	if drop >= uint64(len(p.seen)) {
		p.seen, p.dead = p.seen[:0], 0
		return
	}
	p.seen = p.seen[drop:]
	p.dead += int(drop)
	// Copy down once the dropped prefix outweighs what is kept, so memory
	// follows the waiting numbers, not every number ever issued.
	if p.dead > len(p.seen)+4096 {
		p.seen, p.dead = append([]uint32(nil), p.seen...), 0
	}
}

// Tracked returns how many numbers the memory holds (for metrics and tests).
func (p *Presence) Tracked() int { return len(p.seen) }

// firstUnexamined returns the lowest place whose position may be above
// cursor. Outside a draw a place is its own position; inside a draw that
// the cursor has entered but not left, any number of it may still be ahead.
func (v *View) firstUnexamined(cursor uint64) uint64 {
	for i := len(v.Draws) - 1; i >= 0; i-- {
		d := &v.Draws[i]
		if d.Contains(cursor) && cursor < d.To {
			return d.From + 1
		}
	}
	return cursor + 1
}

// DecideAbandon examines the positions the window will reach within ahead
// (after moving over what it finds) that no scan has examined yet. For
// every position whose number has been silent for longer than the grace
// period it moves the line one further. It returns the Abandoned event (none
// when nothing was found, or detection is off, or the line stands still)
// and the highest position examined; with no event the caller records that
// cursor in p itself.
func (s *State) DecideAbandon(p *Presence, now int64, ahead time.Duration) ([]Event, uint64) {
	start := max(s.AbandonScan, p.cursor)
	if !s.Live() || !s.Config.Abandon.Enabled || !running(&s.Config, s.Armed != nil) {
		return nil, start
	}
	line := s.normalized(now).anchor(now, lineRate(&s.Config, false))
	serving := line.At(now)
	if at := floor(serving); at > start {
		start = at
	}
	reach := s.Config.RatePerMinute * ahead.Minutes()
	// Silent for longer than the grace period: last seen before deadline.
	deadline := int64(unixSeconds(now)) - int64(s.Config.Abandon.GraceSeconds)
	var count uint64
	pos, places := start, s.Places()
	for pos < places && pos-start < MaxAbandonScan && float64(pos+1) <= serving+float64(count)+reach {
		pos++
		if int64(p.LastSeen(s.PlaceAt(pos))) < deadline {
			count++
		}
	}
	if count == 0 {
		return nil, pos
	}
	e := s.event(TypeAbandoned, now, "")
	e.Abandoned = &Abandoned{Count: count, Cursor: pos}
	line.Base += float64(count)
	e.Line = &line
	return []Event{e}, pos
}
