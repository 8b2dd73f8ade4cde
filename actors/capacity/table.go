// Package capacity holds the rule of a capacity room as a plain state
// machine: at most Active visitors inside at once, everyone else in a line
// in arrival order. No actors, no I/O, time passed in (Unix nanoseconds).
//
// A slot is kept Session after the visitor's last request. A waiting
// visitor who stops checking for three times Refresh loses the place. When
// a slot frees it goes to the first visitor in line who checks again: with
// k free slots, the first k of the line are let in on their next check, and
// nobody behind them is.
//
// A first request without a cookie takes only a provisional place (Arrive,
// provisional.go): nothing is written and nobody's position counts it until
// the visitor comes back with the cookie (Confirm), when the place is
// inserted at its arrival time.
//
// The grain holding a table appends the events that Check, Touch, Release
// and Expire return, then applies them with Apply; a table is recovered by
// replaying its log through Apply and calling Recovered.
package capacity

import (
	"encoding/json"
	"errors"
	"slices"
	"time"

	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

// Settings are a capacity room's operator settings.
type Settings struct {
	// Active is how many visitors may be inside at once (at least 1).
	Active int `json:"active"`
	// Session is how long a slot is kept after the visitor's last request.
	Session time.Duration `json:"session"`
	// Refresh is how often the waiting page checks again; a waiter silent
	// for three times as long loses the place.
	Refresh time.Duration `json:"refresh"`
	// Pow turns proof of work on by itself under a flood of arrivals
	// (powauto.go); the zero value is off.
	Pow PowAuto `json:"pow,omitzero"`
	// AddressBudget limits the new visitors one client address brings on
	// each proxy node (the proxies enforce it; zero: the defaults).
	AddressBudget rate.AddressBudget `json:"addressBudget,omitzero"`
}

// Defaults of the seed: a slot is kept five minutes, the page checks every
// ten seconds.
const (
	DefaultSession = 5 * time.Minute
	DefaultRefresh = 10 * time.Second
)

// ErrSettings is returned by Validate.
var ErrSettings = errors.New("capacity room: active must be at least 1, session and refresh positive")

// Validate reports whether the settings can run a room.
func (s Settings) Validate() error {
	if s.Active < 1 || s.Session <= 0 || s.Refresh <= 0 {
		return ErrSettings
	}
	return s.Pow.validate()
}

// Status is what a visitor is told after a check.
type Status struct {
	// Admitted reports whether the visitor holds a slot.
	Admitted bool `json:"admitted"`
	// Expires is when the slot ends unless renewed (admitted only).
	Expires int64 `json:"expires,omitempty"`
	// Position is the place in line, 1 is next (waiting only).
	Position int `json:"position,omitempty"`
	// Waiting is everyone waiting in the line, the visitor included.
	Waiting int `json:"waiting"`
	// Inside is how many slots are taken.
	Inside int `json:"inside"`
	// Provisional reports a place not yet counted (a first request, see
	// Arrive): Position is then an estimate, everyone waiting plus one.
	Provisional bool `json:"provisional,omitempty"`
	// Pow is the proof of work new arrivals must solve now, in bits (0:
	// none).
	Pow int `json:"pow,omitempty"`
	// Arrived is when the room saw a provisional place's first request
	// (Unix nanoseconds, the room's clock): the cookie keeps it, and the
	// return confirms the place at it, whatever the proxy node's clock.
	Arrived int64 `json:"arrived,omitempty"`
}

// Table is one capacity room: the slot holders and the line. It is not
// safe for concurrent use; its owner (the grain) serialises calls.
type Table struct {
	// Epoch is the activation whose events are applied (fencing).
	Epoch int64 `json:"epoch"`
	// Settings are in force: File with Runtime over it (runtime.go).
	Settings Settings `json:"settings"`
	// File is what the proxies' HCL file says; Runtime what an operator
	// changed over it.
	File    Settings `json:"file"`
	Runtime Runtime  `json:"runtime"`
	// FileAt is when the file whose settings File holds was modified, as
	// the proxy that sent them read it (Unix nanoseconds; 0: unknown).
	FileAt int64 `json:"fileAt,omitempty"`
	// Host and Name are the room as the proxies' file names it.
	Host string `json:"host,omitempty"`
	Name string `json:"name,omitempty"`
	// Audit is the last adjustments, oldest first.
	Audit []AuditEntry `json:"audit,omitempty"`
	// PowReason is why the automatic proof of work last changed.
	PowReason string `json:"powReason,omitempty"`
	// Inside maps each slot holder to when the slot ends.
	Inside map[string]int64 `json:"inside"`
	// KeySealed is the key of the visitors' cookies, sealed.
	KeySealed []byte `json:"keySealed,omitempty"`
	// Pow is the automatic proof of work in force (nil: none).
	Pow *rate.PowLevel `json:"pow,omitempty"`
	// Held slots stay free for nobody until HeldUntil: a restore holds
	// those the lost node may have given (restore.go).
	Held      int   `json:"held,omitempty"`
	HeldUntil int64 `json:"heldUntil,omitempty"`

	// line is the waiting visitors in arrival order (Waiting; "line" in
	// the JSON of a snapshot).
	line *line
	// seen is when each waiter last checked. Not in the log: it starts
	// afresh (at the recovery time) on activation, so a restart costs no
	// waiter the place.
	seen map[string]int64
	// scanned is when Expire last looked for silent waiters: it looks
	// through the whole line at most once a second.
	scanned int64
	// adjusted is when the last adjustments were made (their bound).
	adjusted []int64
	// minute counts admissions, expiries and provisional places over the
	// last minute (rates.go); not in the log.
	minute rates
}

// New returns an empty table.
func New() *Table {
	return &Table{Inside: map[string]int64{}, seen: map[string]int64{}, line: newLine()}
}

// tableJSON is a table's snapshot encoding.
type tableJSON struct {
	Epoch     int64            `json:"epoch"`
	Settings  Settings         `json:"settings"`
	Inside    map[string]int64 `json:"inside"`
	Line      []string         `json:"line"`
	LineAt    []int64          `json:"lineAt,omitempty"`
	KeySealed []byte           `json:"keySealed,omitempty"`
	Pow       *rate.PowLevel   `json:"pow,omitempty"`
	Held      int              `json:"held,omitempty"`
	HeldUntil int64            `json:"heldUntil,omitempty"`
	File      *Settings        `json:"file,omitempty"`
	Runtime   Runtime          `json:"runtime,omitzero"`
	Host      string           `json:"host,omitempty"`
	Name      string           `json:"name,omitempty"`
	Audit     []AuditEntry     `json:"audit,omitempty"`
	PowReason string           `json:"powReason,omitempty"`
	Adjusted  []int64          `json:"adjusted,omitempty"`
	FileAt    int64            `json:"fileAt,omitempty"`
}

// MarshalJSON encodes the table for a snapshot.
func (t *Table) MarshalJSON() ([]byte, error) {
	t.init()
	file := t.File
	return json.Marshal(tableJSON{t.Epoch, t.Settings, t.Inside, t.line.list(), t.line.times(), t.KeySealed, t.Pow, t.Held, t.HeldUntil,
		&file, t.Runtime, t.Host, t.Name, t.Audit, t.PowReason, t.adjusted, t.FileAt})
}

// UnmarshalJSON restores a snapshot; call Recovered after replay.
func (t *Table) UnmarshalJSON(b []byte) error {
	var j tableJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t.Epoch, t.Settings, t.Inside, t.KeySealed, t.Pow = j.Epoch, j.Settings, j.Inside, j.KeySealed, j.Pow
	t.Held, t.HeldUntil = j.Held, j.HeldUntil
	// A snapshot from before runtime settings: what was in force is the
	// file's.
	t.File = j.Settings
	if j.File != nil {
		t.File = *j.File
	}
	t.Runtime, t.Host, t.Name, t.Audit, t.PowReason, t.adjusted = j.Runtime, j.Host, j.Name, j.Audit, j.PowReason, j.Adjusted
	t.FileAt = j.FileAt
	t.line = newLine()
	t.line.rebuild(j.Line, j.LineAt)
	t.seen = map[string]int64{}
	return nil
}

// Waiting returns the line in arrival order.
func (t *Table) Waiting() []string {
	t.init()
	return t.line.list()
}

func (t *Table) init() {
	if t.Inside == nil {
		t.Inside = map[string]int64{}
	}
	if t.line == nil {
		t.line = newLine()
	}
	if t.seen == nil {
		t.seen = map[string]int64{}
	}
}

// Recovered is called after replay at time now: every slot holder keeps
// the slot for at least one more session and every waiter counts as seen
// now, so the time the room was down costs nobody a place. Slot holders are
// never dropped by a restart, so never more than Active are inside.
func (t *Table) Recovered(now int64) {
	t.init()
	t.seen, t.scanned = map[string]int64{}, 0
	for id, exp := range t.Inside {
		if until := now + int64(t.Settings.Session); until > exp {
			t.Inside[id] = until
		}
	}
	t.line.each(func(id string) { t.seen[id] = now })
}

// Configure returns the event that changes the file's settings (and the
// room's host and name, when given), or none when they are unchanged. The
// settings in force keep the runtime's changes over the new file. Lowering
// Active never evicts anyone: the room lets nobody in until fewer than the
// new Active are inside.
func (t *Table) Configure(s Settings, host, name string, now int64) []Event {
	if s == t.File && (host == "" && name == "" || host == t.Host && name == t.Name) {
		return nil
	}
	return []Event{{Type: TypeConfigured, At: now, Settings: &s, Host: host, Name: name}}
}

// Check is a visitor's request at now: a slot holder's slot is renewed
// (kept Session from now, not in the log); a waiter's check is recorded,
// and the waiter is let in when a slot is free for their place; an unknown
// visitor joins the end of the line, or goes straight in when nobody waits
// and a slot is free. The returned events include expiries found on the
// way; Status tells the outcome once they are applied.
func (t *Table) Check(id string, now int64) []Event {
	evs := t.Expire(now)
	gone, left := expired(evs)
	until := now + int64(t.Settings.Session)
	if _, ok := t.Inside[id]; ok && !gone[id] {
		t.Inside[id] = max(t.Inside[id], until)
		return evs
	}
	free := t.free(gone, now)
	if ahead, ok := t.line.ahead(id); ok && !left[id] {
		t.seen[id] = now
		mine := ahead
		for w := range left {
			if n, _ := t.line.ahead(w); n < mine {
				ahead--
			}
		}
		if ahead < free {
			evs = append(evs, Event{Type: TypeAdmitted, At: now, ID: id, Until: until})
		}
		return evs
	}
	if t.line.len()-len(left) == 0 && free > 0 {
		return append(evs, Event{Type: TypeAdmitted, At: now, ID: id, Until: until})
	}
	// A new visitor, or a waiter silent too long (the Expired event
	// before this one drops the old place): the end of the line.
	return append(evs, Event{Type: TypeQueued, At: now, ID: id})
}

// expired returns the slot holders and waiters an Expire result drops.
func expired(evs []Event) (gone, left map[string]bool) {
	if len(evs) == 0 {
		return nil, nil
	}
	return set(evs[0].IDs), set(evs[0].Left)
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Status tells visitor id where they stand. It changes nothing.
func (t *Table) Status(id string) Status {
	t.init()
	st := Status{Waiting: t.line.len(), Inside: len(t.Inside), Pow: t.PowBits()}
	if exp, ok := t.Inside[id]; ok {
		st.Admitted, st.Expires = true, exp
		return st
	}
	if n, ok := t.line.ahead(id); ok {
		st.Position = n + 1
	}
	return st
}

// Touch renews the slots of ids, seen active at now (a proxy's batch of
// requests). Touches are not in the log; visitors not inside are ignored.
func (t *Table) Touch(ids []string, now int64) {
	until := now + int64(t.Settings.Session)
	for _, id := range ids {
		if exp, ok := t.Inside[id]; ok && until > exp {
			t.Inside[id] = until
		}
	}
}

// Release frees visitor id's slot at once (the upstream said the visitor
// is done), or takes a waiter out of the line.
func (t *Table) Release(id string, now int64) []Event {
	_, in := t.Inside[id]
	q := t.line.has(id)
	if !in && !q {
		return nil
	}
	return []Event{{Type: TypeReleased, At: now, ID: id}}
}

// Expire returns the event that frees the slots whose session ended and
// drops the waiters silent for three times Refresh, or none.
func (t *Table) Expire(now int64) []Event {
	var gone, left []string
	for id, exp := range t.Inside {
		if exp <= now {
			gone = append(gone, id)
		}
	}
	if now-t.scanned >= int64(time.Second) {
		t.scanned = now
		limit := now - 3*int64(t.Settings.Refresh)
		t.line.each(func(id string) {
			if t.seen[id] < limit {
				left = append(left, id)
			}
		})
	}
	if len(gone) == 0 && len(left) == 0 {
		return nil
	}
	slices.Sort(gone)
	return []Event{{Type: TypeExpired, At: now, IDs: gone, Left: left}}
}

// Apply applies one event read from (or just appended to) the log at
// offset. It is pure and total. Events of another activation than the
// current one are ignored (fencing).
func (t *Table) Apply(offset int64, e Event) {
	if e.Type == TypeActivated {
		t.Epoch = offset
		return
	}
	if e.Epoch != t.Epoch {
		return
	}
	t.apply(e)
}

func (t *Table) apply(e Event) {
	t.init()
	switch e.Type {
	case TypeConfigured:
		t.applyConfigured(e)
	case TypeAdjusted:
		t.applyAdjusted(e)
	case TypeKeyed:
		t.KeySealed = e.KeySealed
	case TypeRestored:
		t.Held, t.HeldUntil = e.Held, e.Until
	case TypePow:
		if t.Pow = nil; e.Pow != nil && e.Pow.Bits > 0 {
			lv := *e.Pow
			t.Pow = &lv
		}
		t.PowReason = e.Reason
	case TypeQueued:
		if !t.line.has(e.ID) {
			if e.Arrived > 0 && e.Arrived < e.At {
				t.line.insert(e.ID, e.Arrived)
			} else {
				t.line.push(e.ID, e.At)
			}
			if _, ok := t.seen[e.ID]; !ok {
				t.seen[e.ID] = e.At
			}
		}
	case TypeAdmitted:
		t.dequeue(e.ID)
		t.Inside[e.ID] = max(t.Inside[e.ID], e.Until)
		t.minute.add(e.At, 1, 0, 0)
	case TypeReleased:
		delete(t.Inside, e.ID)
		t.dequeue(e.ID)
	case TypeExpired:
		for _, id := range e.IDs {
			delete(t.Inside, id)
		}
		t.minute.add(e.At, 0, len(e.IDs), 0)
		for _, id := range e.Left {
			t.dequeue(id)
		}
	}
}

func (t *Table) dequeue(id string) {
	t.line.remove(id)
	delete(t.seen, id)
}
