package room

import (
	"errors"
	"unicode/utf8"
)

// Modes of a room (Config.Mode). A mode decides who is admitted and who may
// join; pausing (Active false) is separate and takes precedence over every
// mode but soldOut and maintenance, whose answers tell the visitor more.
const (
	// ModeQueue is the normal waiting room: joins get numbers, the line
	// admits them at the rate.
	ModeQueue = "queue"
	// ModePassthrough admits every join at once; arrivals are still
	// numbered and counted.
	ModePassthrough = "passthrough"
	// ModeSoldOut refuses joins and admissions with the sold-out message.
	// Tokens already issued stay valid; numbers are kept, so a return to
	// queue resumes the line where it stood.
	ModeSoldOut = "soldOut"
	// ModeMaintenance is like ModeSoldOut with the maintenance message: the
	// shop is down for a while.
	ModeMaintenance = "maintenance"
	// ModeQueueAll is the emergency stop: joins still get numbers, nobody is
	// admitted, and the line resumes at the rate from where it stopped.
	ModeQueueAll = "queueAll"
)

// Modes lists every mode, the default first.
var Modes = []string{ModeQueue, ModePassthrough, ModeSoldOut, ModeMaintenance, ModeQueueAll}

// Errors of the closed modes.
var (
	ErrSoldOut     = errors.New("room sold out")
	ErrMaintenance = errors.New("room in maintenance")
)

// MaintenanceRetrySeconds is the Retry-After of a maintenance answer.
const MaintenanceRetrySeconds = 120

// ModeMessage is what visitors read in a closed mode, in German and
// English and, in Texts, any other of Languages (see Text for the
// fallback); LinkURL, when set, is offered under it (a returns page, the
// shop's status page).
type ModeMessage struct {
	De      string            `json:"de,omitempty"`
	En      string            `json:"en,omitempty"`
	Texts   map[string]string `json:"texts,omitempty"`
	LinkURL string            `json:"linkUrl,omitempty"`
}

func (m *ModeMessage) validate(field string) error {
	if utf8.RuneCountInString(m.De) > 1000 {
		return invalid(field+".de", "at most 1000 characters")
	}
	if utf8.RuneCountInString(m.En) > 1000 {
		return invalid(field+".en", "at most 1000 characters")
	}
	if err := validateTexts(field+".texts", m.Texts, 1000); err != nil {
		return err
	}
	if m.LinkURL != "" {
		if err := checkHTTPURL(m.LinkURL); err != nil {
			return invalid(field+".linkUrl", "%s", err)
		}
	}
	return nil
}

func (c *Config) validateMode() error {
	if !knownMode(c.Mode) {
		return invalid("mode", "must be one of queue, passthrough, soldOut, maintenance, queueAll")
	}
	if err := c.SoldOutMessage.validate("soldOutMessage"); err != nil {
		return err
	}
	if err := c.MaintenanceMessage.validate("maintenanceMessage"); err != nil {
		return err
	}
	if c.WaitingStatus != 0 && c.WaitingStatus != 200 && c.WaitingStatus != 202 && c.WaitingStatus != 429 {
		return invalid("waitingStatus", "must be 200, 202 or 429")
	}
	return nil
}

// modeOf reads an unset mode (rooms created before modes) as queue.
func modeOf(c *Config) string {
	if c.Mode == "" {
		return ModeQueue
	}
	return c.Mode
}

// EffectiveMode is the room's mode, queue for rooms that never set one.
func (v *View) EffectiveMode() string { return modeOf(&v.Config) }

// Closed returns ErrSoldOut or ErrMaintenance when the room's mode refuses
// every join and admission, and nil otherwise.
func (v *View) Closed() error { return closedErr(&v.Config) }

func closedErr(c *Config) error {
	switch modeOf(c) {
	case ModeSoldOut:
		return ErrSoldOut
	case ModeMaintenance:
		return ErrMaintenance
	}
	return nil
}

// frozen reports whether the mode stops the line: nobody is admitted.
func frozen(c *Config) bool {
	switch modeOf(c) {
	case ModeSoldOut, ModeMaintenance, ModeQueueAll:
		return true
	}
	return false
}

// passthrough reports whether every issued number is admitted.
func passthrough(c *Config) bool { return modeOf(c) == ModePassthrough }

// modeLine adjusts line, re-anchored at now for the configuration next, to
// a change of mode from prev: leaving passthrough keeps everyone it let in
// admitted (the line starts at the issued count); the emergency stop leaves no
// unused capacity above the issued count, so nobody who joins during it is
// admitted. Serving never goes back over an issued number.
func modeLine(line Line, prev, next *Config, issued uint64, armed bool) Line {
	if passthrough(prev) && !armed && line.Base < float64(issued) {
		line.Base = float64(issued)
	}
	if modeOf(next) == ModeQueueAll && line.Base > float64(issued) {
		line.Base = float64(issued)
	}
	return line
}

// modeAudit is the audit detail of a mode change, or "" if there is none.
func modeAudit(prev, next *Config) string {
	if modeOf(prev) == modeOf(next) {
		return ""
	}
	return modeOf(prev) + " → " + modeOf(next)
}
