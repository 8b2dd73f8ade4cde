// Package room holds a waiting room's rules as a plain state machine: no
// actors, no I/O, time passed in. The room grain is a thin shell around it:
// it appends the events that Decide… methods return, then applies them, and
// recovers a room by replaying its log through Apply.
package room

import (
	"crypto/subtle"
	"errors"
	"sort"
	"time"
	"unicode/utf8"
)

// Errors answered to callers. The grain passes them on as values.
var (
	ErrNotFound  = errors.New("room not found")
	ErrExists    = errors.New("room exists")
	ErrPaused    = errors.New("room paused")
	ErrTooEarly  = errors.New("not yet admitted")
	ErrNotIssued = errors.New("number never issued")
	// ErrNeedBlock means no reserved number is left: the grain must append
	// a reservation first.
	ErrNeedBlock = errors.New("reservation needed")
	ErrNoCode    = errors.New("no such code")
	ErrNoItem    = errors.New("no such item")
	// ErrStale refuses a configuration written over a version of the site
	// other than the one it was read from (CheckVersion).
	ErrStale = errors.New("the site changed since it was read")
)

// Key is an API key of the room; only the hash of the key is kept.
type Key struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Hash      []byte `json:"hash"`
	CreatedAt int64  `json:"createdAt"`
}

// Code is a VIP bypass code; only its hash is kept.
type Code struct {
	ID         string     `json:"id"`
	Label      string     `json:"label"`
	Hash       []byte     `json:"hash"`
	UsageLimit *int       `json:"usageLimit,omitempty"`
	Uses       int        `json:"uses"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	Disabled   bool       `json:"disabled"`
	CreatedAt  int64      `json:"createdAt"`
}

// AuditEntry is one administrative change.
type AuditEntry struct {
	At     int64  `json:"at"`
	Actor  string `json:"actor"`
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// MaxAudit bounds the audit trail kept in the state (oldest dropped).
const MaxAudit = 2000

// State is the whole state of one room.
type State struct {
	View
	// Reserved is the highest number reserved in the log; numbers up to it
	// may be handed out by the current activation.
	Reserved uint64 `json:"reserved"`
	// Checkpointed is the issued count last written to the log.
	Checkpointed uint64           `json:"checkpointed"`
	Keys         map[string]*Key  `json:"keys"`
	Codes        map[string]*Code `json:"codes"`
	Audit        []AuditEntry     `json:"audit"`
	AbandonScan  uint64           `json:"abandonScan"`
	// RateChanges are the self-regulating rate's latest adjustments,
	// oldest first (at most MaxRateLog).
	RateChanges []RateChange `json:"rateChanges,omitempty"`
	// AutoFailures counts consecutive failed health checks.
	AutoFailures int `json:"autoFailures,omitempty"`
	// HealthPassed is the URL of the latest passing health-check test.
	HealthPassed string `json:"healthPassed,omitempty"`
	// DrawKeySealed is the armed draw's key, sealed under the master key;
	// it is revealed in the draw.
	DrawKeySealed []byte `json:"drawKeySealed,omitempty"`
	// Commands are the ids of the latest commands applied (commands.go).
	Commands *Commands `json:"commands,omitempty"`

	// hashes finds keys and codes by hash (hashes.go); not in snapshots.
	hashes *hashIndex
}

// New returns the empty state of room id, before its Created event.
func New(id string) *State {
	return &State{View: View{ID: id}, Keys: map[string]*Key{}, Codes: map[string]*Code{}}
}

// Apply applies one event read from (or just appended to) the log at
// offset. It is pure and total: it never fails and never does I/O. Events
// whose Epoch is not the current activation's are ignored (fencing), except
// Activated markers, which start a new activation.
func (s *State) Apply(offset int64, e Event) {
	if e.Type == TypeActivated {
		s.Epoch = offset
		s.Version++
		return
	}
	if e.Epoch != s.Epoch {
		return
	}
	s.Version++
	s.applyCommand(e)
	if e.Line != nil {
		s.Line = *e.Line
	}
	if f := appliers[e.Type]; f != nil {
		f(s, e)
	}
}

func (s *State) audit(e Event, action, detail string) {
	if e.Actor == "" {
		return
	}
	s.Audit = append(s.Audit, AuditEntry{At: e.At, Actor: e.Actor, Action: action, Detail: detail})
	if len(s.Audit) > MaxAudit {
		s.Audit = append([]AuditEntry(nil), s.Audit[len(s.Audit)-MaxAudit:]...)
	}
}

// Recovered is called once after a replay, before the state serves: every
// reserved number counts as issued, so numbers continue above all that may
// have been handed out before a crash. The unused rest of the reservation
// (at most about two blocks) are ghosts: numbers nobody holds.
func (s *State) Recovered() {
	if s.Reserved > s.Issued {
		s.Issued = s.Reserved
	}
	s.hashes = nil
}

// Live reports whether the room exists and is not deleted.
func (s *State) Live() bool { return s.Exists && !s.Deleted }

// running reports whether the line advances under cfg (not paused, not
// before the opening, not stopped by the mode).
func running(cfg *Config, armed bool) bool { return cfg.Active && !armed && !frozen(cfg) }

// lineRate is the rate the line runs at under cfg.
func lineRate(cfg *Config, armed bool) float64 {
	if running(cfg, armed) {
		return cfg.RatePerMinute
	}
	return 0
}

// normalized is the current line re-based at now: never ahead of the cap.
func (s *State) normalized(now int64) Line {
	return s.Line.capped(now, s.Cap())
}

func (s *State) event(typ string, now int64, actor string) Event {
	return Event{Type: typ, Epoch: s.Epoch, At: now, Actor: actor}
}

// DecideCreate creates the room.
//
// A future opening arms the draw and commits it with dk, which must hold a
// fresh key and its sealed form (ErrDrawKey otherwise).
func (s *State) DecideCreate(cfg Config, secretSealed, ticketKeySealed []byte, now int64, actor string, dk DrawKey) ([]Event, error) {
	if s.Exists {
		return nil, ErrExists
	}
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkEnable(&cfg); err != nil {
		return nil, err
	}
	phase := PhaseAt(&cfg, time.Unix(0, now))
	eff := cfg.Effective(phase)
	armed := eff.OpensAt != nil && eff.OpensAt.UnixNano() > now
	e := s.event(TypeCreated, now, actor)
	e.Created = &Created{Config: cfg, Phase: phase, SecretSealed: secretSealed, TicketKeySealed: ticketKeySealed}
	if armed {
		c, err := newCommitment(dk, cfg.Slug, *eff.OpensAt, now)
		if err != nil {
			return nil, err
		}
		e.Created.Commit, e.Created.DrawKeySealed = c, dk.Sealed
	}
	// A new room starts with its burst free: the first visitors of a quiet
	// room are admitted at once (invariant 4). Before an opening nobody is.
	base := eff.Burst()
	if armed || frozen(&eff) {
		base = 0
	}
	e.Line = &Line{Base: base, T0: now, Rate: lineRate(&eff, armed)}
	return []Event{e}, nil
}

// CheckVersion returns ErrStale unless version, the UpdatedAt of the site
// a configuration was read from, is the room's; 0 checks nothing (a write
// that does not carry the version it read).
func (s *State) CheckVersion(version int64) error {
	if version != 0 && version != s.UpdatedAt {
		return ErrStale
	}
	return nil
}

// DecideConfigure replaces the configuration (slug excepted). A rate change,
// pause or resume re-anchors the line at now, so serving stays continuous.
// Setting a future opening arms a draw and commits it with dk (a fresh key,
// sealed; ErrDrawKey without one); moving it keeps the key and recommits
// to the new time. Moving it into the past makes the draw due at once: a
// committed draw at the next tick, an older uncommitted one here, with
// dk.Key.
func (s *State) DecideConfigure(cfg Config, now int64, actor string, dk DrawKey) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	cfg.Slug = s.Config.Slug
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkEnable(&cfg); err != nil {
		return nil, err
	}
	return s.configure(cfg, PhaseAt(&cfg, time.Unix(0, now)), now, actor, dk)
}

// configure writes base configuration cfg in phase p: the line, the draw
// and the rate follow the configuration in force, cfg with p's overrides.
func (s *State) configure(base Config, p Phase, now int64, actor string, dk DrawKey) ([]Event, error) {
	cfg := base.Effective(p)
	manual := s.manualRate(&cfg, now, actor)
	if !base.rateOverridden(p) {
		base.RatePerMinute = cfg.RatePerMinute
	}
	c := &Configured{Config: base, Phase: p}
	armed := s.Armed != nil
	future := cfg.OpensAt != nil && cfg.OpensAt.UnixNano() > now
	switch {
	case future && !armed:
		commit, err := newCommitment(dk, cfg.Slug, *cfg.OpensAt, now)
		if err != nil {
			return nil, err
		}
		c.Arm, c.DrawKeySealed = &Arm{From: s.Issued, Commit: commit}, dk.Sealed
		armed = true
	case !future && armed && cfg.OpensAt == nil:
		c.Disarm = true
		armed = false
	case armed && s.Armed.Closed == nil:
		c.Recommit = s.Armed.Commit.moved(cfg.OpensAt, now)
	}
	places := s.Places()
	line := modeLine(s.normalized(now).anchor(now, lineRate(&cfg, armed)), &s.Config, &cfg, places, s.Armed != nil)
	if c.Arm != nil && line.Base > float64(places) {
		// Nobody in the coming pre-queue may pass before the opening.
		line.Base = float64(places)
	}
	e := s.event(TypeConfigured, now, actor)
	e.Configured = c
	e.Line = &line
	evs := []Event{e}
	if manual != nil {
		evs = append(evs, *manual)
	}
	// An uncommitted opening moved into the past is due now.
	if armed && !future && cfg.OpensAt != nil && s.Armed.Commit == nil {
		next := *s
		next.Apply(s.Epoch, e)
		evs = append(evs, next.drawEvents(now, dk.Key)...)
	}
	return evs, nil
}

// DecideOpen makes an uncommitted draw (armed before draws were committed)
// when the scheduled opening is due. key is the permutation key, fresh
// random bytes drawn by the caller at the opening. A committed draw is made
// by DecideDraw.
func (s *State) DecideOpen(now int64, key []byte) []Event {
	if !s.openingDue(now) || s.Armed.Commit != nil {
		return nil
	}
	return s.drawEvents(now, key)
}

func (s *State) drawEvents(now int64, key []byte) []Event {
	e := s.event(TypeDrawn, now, "")
	e.Drawn = &Draw{From: s.compact(s.Armed.From), To: s.Places(), Key: key, At: now}
	line := Line{Base: s.Line.Base, T0: now, Rate: lineRate(&s.Config, false)}
	e.Line = &line
	return []Event{e}
}

// OpeningDue returns when the pending draw is due, if one is armed.
func (s *State) OpeningDue() (time.Time, bool) {
	if s.Armed == nil || s.Config.OpensAt == nil || !s.Live() {
		return time.Time{}, false
	}
	return *s.Config.OpensAt, true
}

// DecideReserve reserves numbers up to upTo. The reservation also records
// the line as joins have re-based it: joins write no event, so without it a
// crash would replay an older line and hand the capacity of a quiet spell
// back to the spike that followed it.
func (s *State) DecideReserve(upTo uint64, now int64) []Event {
	e := s.event(TypeReserved, now, "")
	e.Reserved = &Reserved{UpTo: upTo}
	l := s.normalized(now)
	e.Line = &l
	return []Event{e}
}

// DecideCheckpoint records the issued count and materialises the re-based
// line, so recovery does not bank capacity. final releases the unused part
// of the reservation (graceful stop).
func (s *State) DecideCheckpoint(now int64, final bool) []Event {
	e := s.event(TypeCheckpoint, now, "")
	e.Checkpoint = &Checkpoint{Issued: s.Issued, Final: final}
	l := s.normalized(now)
	e.Line = &l
	return []Event{e}
}

// DecideRotateSecret replaces the signing secret.
func (s *State) DecideRotateSecret(sealed []byte, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	e := s.event(TypeSecretRotated, now, actor)
	e.SecretRotated = &SecretRotated{SecretSealed: sealed}
	return []Event{e}, nil
}

// DecideAddKey adds an API key.
func (s *State) DecideAddKey(id, name string, hash []byte, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return nil, &FieldError{Field: "name", Message: "is required, at most 100 characters"}
	}
	e := s.event(TypeKeyAdded, now, actor)
	e.KeyAdded = &KeyAdded{ID: id, Name: name, Hash: hash}
	return []Event{e}, nil
}

// DecideRemoveKey removes an API key.
func (s *State) DecideRemoveKey(id string, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	if _, ok := s.Keys[id]; !ok {
		return nil, ErrNoItem
	}
	e := s.event(TypeKeyRemoved, now, actor)
	e.KeyRemoved = &ItemRemoved{ID: id}
	return []Event{e}, nil
}

// KeyByHash returns the key whose hash is h.
func (s *State) KeyByHash(h []byte) (*Key, bool) {
	id, ok := s.index().keys[string(h)]
	if !ok {
		return nil, false
	}
	k, ok := s.Keys[id]
	if !ok || subtle.ConstantTimeCompare(k.Hash, h) != 1 {
		return nil, false
	}
	return k, true
}

func (s *State) sortedKeys() []*Key {
	ks := make([]*Key, 0, len(s.Keys))
	for _, k := range s.Keys {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		return ks[i].CreatedAt < ks[j].CreatedAt || (ks[i].CreatedAt == ks[j].CreatedAt && ks[i].ID < ks[j].ID)
	})
	return ks
}

// SortedKeys lists the keys, oldest first.
func (s *State) SortedKeys() []*Key { return s.sortedKeys() }

// SortedCodes lists the bypass codes, oldest first.
func (s *State) SortedCodes() []*Code {
	cs := make([]*Code, 0, len(s.Codes))
	for _, c := range s.Codes {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		return cs[i].CreatedAt < cs[j].CreatedAt || (cs[i].CreatedAt == cs[j].CreatedAt && cs[i].ID < cs[j].ID)
	})
	return cs
}

// DecideAddCode adds a bypass code.
func (s *State) DecideAddCode(c CodeAdded, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	if c.Label == "" || utf8.RuneCountInString(c.Label) > 100 {
		return nil, &FieldError{Field: "label", Message: "is required, at most 100 characters"}
	}
	if c.UsageLimit != nil && *c.UsageLimit < 1 {
		return nil, &FieldError{Field: "usageLimit", Message: "must be at least 1"}
	}
	if c.ExpiresAt != nil && c.ExpiresAt.UnixNano() <= now {
		return nil, &FieldError{Field: "expiresAt", Message: "must be in the future"}
	}
	e := s.event(TypeCodeAdded, now, actor)
	e.CodeAdded = &c
	return []Event{e}, nil
}

// DecideChangeCode disables or enables a bypass code.
func (s *State) DecideChangeCode(id string, disabled bool, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	if _, ok := s.Codes[id]; !ok {
		return nil, ErrNoItem
	}
	e := s.event(TypeCodeChanged, now, actor)
	e.CodeChanged = &CodeChanged{ID: id, Disabled: disabled}
	return []Event{e}, nil
}

// DecideRemoveCode deletes a bypass code.
func (s *State) DecideRemoveCode(id string, now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	if _, ok := s.Codes[id]; !ok {
		return nil, ErrNoItem
	}
	e := s.event(TypeCodeRemoved, now, actor)
	e.CodeRemoved = &ItemRemoved{ID: id}
	return []Event{e}, nil
}

// DecideRedeem redeems the bypass code whose hash is h. Every reason a code
// does not work (unknown, disabled, expired, exhausted, room paused or
// deleted) is the same ErrNoCode: no oracle.
func (s *State) DecideRedeem(h []byte, now int64) ([]Event, *Code, error) {
	if !s.Live() || !s.Config.Active || closedErr(&s.Config) != nil {
		return nil, nil, ErrNoCode
	}
	id, ok := s.index().codes[string(h)]
	found := s.Codes[id]
	if !ok || found == nil || subtle.ConstantTimeCompare(found.Hash, h) != 1 ||
		found.Disabled || (found.ExpiresAt != nil && found.ExpiresAt.UnixNano() <= now) ||
		(found.UsageLimit != nil && found.Uses >= *found.UsageLimit) {
		return nil, nil, ErrNoCode
	}
	e := s.event(TypeCodeRedeemed, now, "")
	e.CodeRedeemed = &CodeRedeemed{ID: found.ID}
	return []Event{e}, found, nil
}

// DecideDelete deletes the room.
func (s *State) DecideDelete(now int64, actor string) ([]Event, error) {
	if !s.Live() {
		return nil, ErrNotFound
	}
	return []Event{s.event(TypeDeleted, now, actor)}, nil
}

// Join hands out the next number at now. It is the hot path and writes no
// event: the number comes from the current reservation (ErrNeedBlock when it
// is used up). Before the number is counted, the line is re-based so that a
// quiet room does not bank capacity (docs/architecture.md, invariant 3).
func (s *State) Join(now int64) (uint64, error) {
	if err := s.joinable(); err != nil {
		return 0, err
	}
	if s.Issued >= s.Reserved {
		return 0, ErrNeedBlock
	}
	s.Line = s.normalized(now)
	s.Issued++
	return s.Issued, nil
}

// Admit checks that number n may have an admission token at now.
func (s *State) Admit(n uint64, now int64) (Status, error) {
	if !s.Live() {
		return Status{}, ErrNotFound
	}
	if n == 0 || n > s.Issued {
		return Status{}, ErrNotIssued
	}
	if err := closedErr(&s.Config); err != nil {
		return Status{}, err
	}
	if !s.Config.Active {
		return Status{}, ErrPaused
	}
	st := s.StatusOf(n, now)
	if !st.Admitted {
		return st, ErrTooEarly
	}
	return st, nil
}

// joinable returns why no number may be issued now, or nil: a closed mode
// first (its message tells the visitor more than a pause), then a pause.
func (s *State) joinable() error {
	if !s.Live() {
		return ErrNotFound
	}
	if err := closedErr(&s.Config); err != nil {
		return err
	}
	if !s.Config.Active {
		return ErrPaused
	}
	return nil
}
