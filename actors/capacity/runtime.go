package capacity

import (
	"errors"
	"fmt"
	"math"
	"slices"

	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

// Runtime settings. The proxies' HCL file gives a capacity room its first
// settings (File); an operator changes them at runtime, from the console
// or the admin API, with an adjusted event in the room's log. The settings
// in force are the file's with the runtime's changes over them, so they
// survive a restart of every proxy and a restore: a proxy that starts
// with the file learns the runtime values with its next answer. A change
// of the file (a reload) changes only what the runtime leaves alone.

// Runtime is what an operator changed over the file. The zero value
// changes nothing.
type Runtime struct {
	// Active replaces the file's active (0: the file's).
	Active int `json:"active,omitempty"`
	// Paused lets nobody new in: slot holders stay, the line waits.
	Paused bool `json:"paused,omitempty"`
	// Open lets everyone in: every visitor who checks gets a slot,
	// whatever active says.
	Open bool `json:"open,omitempty"`
	// Pow replaces the file's pow_auto (nil: the file's).
	Pow *PowAuto `json:"pow,omitempty"`
	// AddressBudget replaces the file's address_budget (nil: the file's).
	AddressBudget *rate.AddressBudget `json:"addressBudget,omitempty"`
	// Version counts the adjustments: a change names the version it was
	// made against, and a stale one is refused.
	Version int64 `json:"version"`
}

// over returns the settings in force: file with r's changes.
func (r Runtime) over(file Settings) Settings {
	s := file
	if r.Active > 0 {
		s.Active = r.Active
	}
	if r.Pow != nil {
		s.Pow = *r.Pow
	}
	if r.AddressBudget != nil {
		s.AddressBudget = *r.AddressBudget
	}
	return s
}

// Adjust is an operator's change. Nil fields stay as they are; Reset
// names fields that go back to the file's ("active", "pow",
// "addressBudget", "paused", "open").
type Adjust struct {
	// Version is the runtime version the change was made against.
	Version       int64               `json:"version"`
	Active        *int                `json:"active,omitempty"`
	Paused        *bool               `json:"paused,omitempty"`
	Open          *bool               `json:"open,omitempty"`
	Pow           *PowAuto            `json:"pow,omitempty"`
	AddressBudget *rate.AddressBudget `json:"addressBudget,omitempty"`
	Reset         []string            `json:"reset,omitempty"`
}

// MaxActive bounds active: more visitors inside than any shop serves at
// once is a typing mistake.
const MaxActive = 10_000_000

// Adjustments are bounded: at most MaxAdjustments in AdjustWindow per
// room, so a flood of changes (a script in a loop, a stolen token) cannot
// fill the room's log.
const (
	MaxAdjustments = 30
	AdjustWindow   = int64(60e9)
)

// Errors of DecideAdjust.
var (
	// ErrStale is a change made against another version than the one in
	// force.
	ErrStale = errors.New("capacity room: the room was changed meanwhile; reload and try again")
	// ErrTooManyAdjustments is a change past MaxAdjustments a minute.
	ErrTooManyAdjustments = fmt.Errorf("capacity room: at most %d changes a minute", MaxAdjustments)
)

// InvalidError is a change that cannot run a room; Field names what is
// wrong.
type InvalidError struct{ Field, Message string }

func (e *InvalidError) Error() string { return e.Field + ": " + e.Message }

// TypeAdjusted is an operator's change: Runtime holds the runtime settings
// from now on, Actor who changed them.
const TypeAdjusted = "adjusted"

// AuditEntry is one adjustment as the console lists it.
type AuditEntry struct {
	At      int64   `json:"at"`
	Actor   string  `json:"actor"`
	Runtime Runtime `json:"runtime"`
}

// maxAudit bounds the adjustments a table remembers for the console.
const maxAudit = 50

// DecideAdjust returns the event of change a by actor at now, or an
// error: ErrStale, ErrTooManyAdjustments or an *InvalidError. A change
// that changes nothing returns no event.
func (t *Table) DecideAdjust(a Adjust, actor string, now int64) ([]Event, error) {
	if a.Version != t.Runtime.Version {
		return nil, ErrStale
	}
	n := 0
	for _, at := range t.adjusted {
		if now-at < AdjustWindow {
			n++
		}
	}
	if n >= MaxAdjustments {
		return nil, ErrTooManyAdjustments
	}
	r, err := a.apply(t.Runtime)
	if err != nil {
		return nil, err
	}
	if err := r.over(t.File).Validate(); err != nil && t.File.Active > 0 {
		return nil, &InvalidError{"settings", err.Error()}
	}
	if runtimeEqual(r, t.Runtime) {
		return nil, nil
	}
	r.Version = t.Runtime.Version + 1
	return []Event{{Type: TypeAdjusted, At: now, Runtime: &r, Actor: actor}}, nil
}

// apply returns r with a's changes, checked.
func (a Adjust) apply(r Runtime) (Runtime, error) {
	for _, f := range a.Reset {
		switch f {
		case "active":
			r.Active = 0
		case "pow":
			r.Pow = nil
		case "addressBudget":
			r.AddressBudget = nil
		case "paused":
			r.Paused = false
		case "open":
			r.Open = false
		default:
			return r, &InvalidError{"reset", fmt.Sprintf("unknown field %q (active, paused, open, pow, addressBudget)", f)}
		}
	}
	if a.Active != nil {
		if *a.Active < 1 || *a.Active > MaxActive {
			return r, &InvalidError{"active", fmt.Sprintf("must be 1–%d visitors inside at once", MaxActive)}
		}
		r.Active = *a.Active
	}
	if a.Paused != nil {
		r.Paused = *a.Paused
	}
	if a.Open != nil {
		r.Open = *a.Open
	}
	if a.Pow != nil {
		if err := a.Pow.validate(); err != nil {
			return r, &InvalidError{"pow", err.Error()}
		}
		p := *a.Pow
		r.Pow = &p
	}
	if a.AddressBudget != nil {
		b := *a.AddressBudget
		if !(b.PerMinute >= 1 && b.PerMinute <= rate.MaxBudgetPerMinute) || b.Burst < 1 || b.Burst > rate.MaxBudgetBurst {
			return r, &InvalidError{"addressBudget", fmt.Sprintf("perMinute must be 1–%d and burst 1–%d", rate.MaxBudgetPerMinute, rate.MaxBudgetBurst)}
		}
		r.AddressBudget = &b
	}
	if r.Paused && r.Open {
		return r, &InvalidError{"open", "a room cannot be paused and open at once"}
	}
	return r, nil
}

func runtimeEqual(a, b Runtime) bool {
	return a.Active == b.Active && a.Paused == b.Paused && a.Open == b.Open &&
		ptrEqual(a.Pow, b.Pow) && ptrEqual(a.AddressBudget, b.AddressBudget)
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// applyAdjusted applies an adjusted event.
func (t *Table) applyAdjusted(e Event) {
	if e.Runtime == nil {
		return
	}
	t.Runtime = *e.Runtime
	t.Settings = t.Runtime.over(t.File)
	t.adjusted = append(t.adjusted, e.At)
	if len(t.adjusted) > MaxAdjustments {
		t.adjusted = slices.Delete(t.adjusted, 0, len(t.adjusted)-MaxAdjustments)
	}
	t.Audit = append(t.Audit, AuditEntry{At: e.At, Actor: e.Actor, Runtime: *e.Runtime})
	if len(t.Audit) > maxAudit {
		t.Audit = slices.Delete(t.Audit, 0, len(t.Audit)-maxAudit)
	}
}

// Offer returns the event that makes s the file's settings of the room,
// as a proxy node offers them with every batch: s comes from the node's
// file, modified at fileAt (Unix nanoseconds; 0: unknown, as a visitor's
// check says). Nodes that run different files for one room must not take
// turns writing theirs, twice a second each: once the room holds a file's
// settings, only a file modified later replaces them. The newest file
// wins, once; the nodes that run another are told apart by FileDiffers.
// The room's host and name are recorded whatever the file. A time past
// now (a node's clock ahead) counts as now, so that it cannot keep a file
// in force against every file edited later.
func (t *Table) Offer(s Settings, host, name string, fileAt, now int64) []Event {
	fileAt = min(fileAt, now)
	if s != t.File && t.File.Active > 0 && fileAt <= t.FileAt {
		s, fileAt = t.File, t.FileAt
	}
	evs := t.Configure(s, host, name, now)
	for i := range evs {
		evs[i].FileAt = fileAt
	}
	return evs
}

// FileDiffers reports whether s, a proxy node's file's settings, are not
// the ones the room holds as the file's.
func (t *Table) FileDiffers(s Settings) bool { return s != t.File }

// applyConfigured applies a configured event: the file's settings.
func (t *Table) applyConfigured(e Event) {
	t.File, t.FileAt = *e.Settings, e.FileAt
	if e.Host != "" || e.Name != "" {
		t.Host, t.Name = e.Host, e.Name
	}
	t.Settings = t.Runtime.over(t.File)
}

// Differs names the settings in force that differ from the file's.
func (t *Table) Differs() []string {
	var d []string
	if t.Runtime.Active > 0 && t.Runtime.Active != t.File.Active {
		d = append(d, "active")
	}
	if t.Runtime.Paused {
		d = append(d, "paused")
	}
	if t.Runtime.Open {
		d = append(d, "open")
	}
	if t.Runtime.Pow != nil && *t.Runtime.Pow != t.File.Pow {
		d = append(d, "pow")
	}
	if t.Runtime.AddressBudget != nil && *t.Runtime.AddressBudget != t.File.AddressBudget {
		d = append(d, "addressBudget")
	}
	return d
}

// openFree stands for the free slots of an open room: everyone.
const openFree = math.MaxInt32
