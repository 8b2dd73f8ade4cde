package capacity

import "time"

// Provisional places. A visitor's first request (no cookie) takes no place
// in the line and writes nothing: the visitor is given a cookie saying
// when they arrived, and a provisional place that nobody else's position
// counts. The place becomes real when the cookie comes back (Confirm),
// within one refresh interval and a margin, at its arrival time: a browser
// that keeps its cookie loses nothing by the wait, and a client that drops
// cookies, however fast it sends, never stands ahead of anyone.

// ProvisionalWindow is how long a provisional place waits for its visitor
// to come back: one refresh interval, plus half of one (at least two
// seconds) for the page to load again.
func (s Settings) ProvisionalWindow() time.Duration {
	return s.Refresh + max(s.Refresh/2, 2*time.Second)
}

// Arrive is the first request of visitor id, who has no cookie. When
// nobody waits and a slot is free, the visitor goes in, for one
// provisional window only until they come back (a client that never
// returns holds a slot no longer than a provisional place). Otherwise
// Arrive returns no event for the visitor: the place is provisional
// (Estimate tells what to show) until Confirm. The events returned may hold
// expiries found on the way; a known id is checked as Check does.
func (t *Table) Arrive(id string, now int64) []Event {
	t.init()
	if t.known(id) {
		return t.Check(id, now)
	}
	evs := t.Expire(now)
	gone, left := expired(evs)
	free := t.free(gone, now)
	if t.line.len()-len(left) == 0 && free > 0 {
		until := now + int64(min(t.Settings.Session, t.Settings.ProvisionalWindow()))
		return append(evs, Event{Type: TypeAdmitted, At: now, ID: id, Until: until})
	}
	return evs
}

// Estimate is what a visitor with a provisional place is told: everyone
// now waiting stands ahead (Position is one more, and Waiting counts the
// visitor too, as for a waiter). Others who arrived earlier and have not
// come back yet may still take their places ahead.
func (t *Table) Estimate() Status {
	t.init()
	n := t.line.len()
	return Status{Position: n + 1, Waiting: n + 1, Inside: len(t.Inside), Provisional: true, Pow: t.PowBits()}
}

// Confirm is a request of visitor id whose cookie says they first came at
// arrived. A visitor inside or in line is checked as Check does. Otherwise
// the provisional place becomes real: inserted after everyone who arrived
// before it, or in at once when a slot is free for that place. A cookie
// older than the provisional window (or from a visitor let go since) has
// no place left to confirm: the visitor joins the end as Check would have
// them.
func (t *Table) Confirm(id string, arrived, now int64) []Event {
	t.init()
	if t.known(id) || arrived <= 0 || arrived >= now || now-arrived > int64(t.Settings.ProvisionalWindow()) {
		return t.Check(id, now)
	}
	evs := t.Expire(now)
	gone, left := expired(evs)
	free := t.free(gone, now)
	ahead := t.line.before(arrived)
	for w := range left {
		if t.line.arrival(w) <= arrived {
			ahead--
		}
	}
	if ahead < free {
		return append(evs, Event{Type: TypeAdmitted, At: now, ID: id, Until: now + int64(t.Settings.Session)})
	}
	return append(evs, Event{Type: TypeQueued, At: now, ID: id, Arrived: arrived})
}

// known reports whether id holds a slot or a place in line.
func (t *Table) known(id string) bool {
	_, in := t.Inside[id]
	return in || t.line.has(id)
}
