package room

// appliers apply each kind of event to the state (State.Apply does what
// every event shares: the epoch, the version, the command id, the line).
// An event of a kind not listed changes nothing else.
var appliers = map[string]func(*State, Event){
	TypeCreated:       (*State).applyCreated,
	TypeReserved:      (*State).applyReserved,
	TypeCheckpoint:    (*State).applyCheckpoint,
	TypeConfigured:    (*State).applyConfigured,
	TypeSecretRotated: (*State).applySecretRotated,
	TypeKeyAdded:      (*State).applyKeyAdded,
	TypeKeyRemoved:    (*State).applyKeyRemoved,
	TypeCodeAdded:     (*State).applyCodeAdded,
	TypeCodeChanged:   (*State).applyCodeChanged,
	TypeCodeRemoved:   (*State).applyCodeRemoved,
	TypeCodeRedeemed:  (*State).applyCodeRedeemed,
	TypeDrawn:         (*State).applyDrawn,
	TypeDrawClosed:    (*State).applyDrawClosed,
	TypeAbandoned:     (*State).applyAbandoned,
	TypeRateAdjusted:  (*State).applyRateAdjusted,
	TypeRestored:      func(s *State, e Event) { s.applyRestored(e.Restored) },
	TypeReturned:      func(s *State, e Event) { s.applyReturned(e.Returned) },
	TypeHealthTested:  (*State).applyHealthTested,
	TypeDeleted:       (*State).applyDeleted,
}

func (s *State) applyCreated(e Event) {
	c := e.Created
	s.Exists = true
	s.setConfig(c.Config, c.Phase)
	s.CreatedAt, s.UpdatedAt = e.At, e.At
	s.SecretSealed, s.TicketKeySealed = c.SecretSealed, c.TicketKeySealed
	if s.Config.OpensAt != nil && s.Config.OpensAt.UnixNano() > e.At {
		s.Armed = &Arm{From: 0, Commit: c.Commit}
		s.DrawKeySealed = c.DrawKeySealed
	}
	s.audit(e, "create", c.Config.Slug)
}

func (s *State) applyReserved(e Event) {
	if e.Reserved.UpTo > s.Reserved {
		s.Reserved = e.Reserved.UpTo
	}
}

func (s *State) applyCheckpoint(e Event) {
	c := e.Checkpoint
	if c.Issued > s.Checkpointed {
		s.Checkpointed = c.Issued
	}
	if c.Final && c.Issued >= s.Checkpointed {
		s.Reserved, s.Issued = c.Issued, c.Issued
	}
}

func (s *State) applyConfigured(e Event) {
	c := e.Configured
	prev := s.Config
	s.setConfig(c.Config, c.Phase)
	if d := modeAudit(&prev, &s.Config); d != "" {
		s.audit(e, "set-mode", d)
	}
	if e.Actor != ActorSchedule {
		s.UpdatedAt = e.At
	}
	s.applyArm(c)
	if !c.Config.AutoRate.Enabled {
		s.AutoFailures = 0
	}
	if e.Actor == ActorSchedule {
		s.audit(e, "schedule", phaseDetail(&c.Config, c.Phase))
	} else {
		s.audit(e, "configure", "")
	}
}

// applyArm applies what a configuration does to the draw: arm it, commit
// it anew, or disarm it.
func (s *State) applyArm(c *Configured) {
	if c.Arm != nil {
		a := *c.Arm
		s.Armed = &a
		s.DrawKeySealed = c.DrawKeySealed
	}
	if c.Recommit != nil && s.Armed != nil {
		a := *s.Armed
		a.Commit = c.Recommit
		s.Armed = &a
	}
	if c.Disarm {
		s.Armed, s.DrawKeySealed = nil, nil
	}
}

func (s *State) applySecretRotated(e Event) {
	s.SecretSealed = e.SecretRotated.SecretSealed
	s.UpdatedAt = e.At
	s.audit(e, "rotate-secret", "")
}

func (s *State) applyKeyAdded(e Event) {
	k := e.KeyAdded
	s.Keys[k.ID] = &Key{ID: k.ID, Name: k.Name, Hash: k.Hash, CreatedAt: e.At}
	s.hashes.addKey(k.Hash, k.ID)
	s.audit(e, "add-key", k.Name)
}

func (s *State) applyKeyRemoved(e Event) {
	if k, ok := s.Keys[e.KeyRemoved.ID]; ok {
		delete(s.Keys, k.ID)
		s.hashes = nil
		s.audit(e, "remove-key", k.Name)
	}
}

func (s *State) applyCodeAdded(e Event) {
	c := e.CodeAdded
	s.Codes[c.ID] = &Code{ID: c.ID, Label: c.Label, Hash: c.Hash, UsageLimit: c.UsageLimit, ExpiresAt: c.ExpiresAt, CreatedAt: e.At}
	s.hashes.addCode(c.Hash, c.ID)
	s.audit(e, "add-bypass-code", c.Label)
}

func (s *State) applyCodeChanged(e Event) {
	if c, ok := s.Codes[e.CodeChanged.ID]; ok {
		c.Disabled = e.CodeChanged.Disabled
		s.audit(e, "change-bypass-code", c.Label)
	}
}

func (s *State) applyCodeRemoved(e Event) {
	if c, ok := s.Codes[e.CodeRemoved.ID]; ok {
		delete(s.Codes, c.ID)
		s.hashes = nil
		s.audit(e, "remove-bypass-code", c.Label)
	}
}

func (s *State) applyCodeRedeemed(e Event) {
	if c, ok := s.Codes[e.CodeRedeemed.ID]; ok {
		c.Uses++
	}
}

func (s *State) applyDrawn(e Event) {
	s.Draws = append(s.Draws, *e.Drawn)
	s.Armed, s.DrawKeySealed = nil, nil
}

func (s *State) applyDrawClosed(e Event) {
	if s.Armed != nil {
		a := *s.Armed
		c := *e.DrawClosed
		a.Closed = &c
		s.Armed = &a
	}
}

func (s *State) applyAbandoned(e Event) {
	s.Abandoned += e.Abandoned.Count
	if e.Abandoned.Cursor > s.AbandonScan {
		s.AbandonScan = e.Abandoned.Cursor
	}
}

func (s *State) applyHealthTested(e Event) {
	s.HealthPassed = e.HealthTested.URL
	s.audit(e, "health-check-passed", e.HealthTested.URL)
}

func (s *State) applyDeleted(e Event) {
	s.Deleted = true
	s.UpdatedAt = e.At
	s.audit(e, "delete", "")
}
