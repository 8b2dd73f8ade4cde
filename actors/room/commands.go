package room

// Commands apply once. A front retries a call whose answer is late (the
// client's attempt bound); the retry carries the same command id as the
// first attempt. Every event a command writes carries its id (Event.Command),
// and the state remembers the ids of the latest commands, so a retry that
// reaches the room after the first attempt's events were applied (by this
// activation or, after a crash, by the next one replaying the log) is
// recognised and not applied again.

// MaxCommands bounds the command ids a room remembers (oldest forgotten).
// A retry comes within its call's deadline (seconds); a room writes far
// fewer than this many commands in that time, since its write queue is
// bounded too.
const MaxCommands = 1024

// MaxCommandID bounds a command id's length; a longer one is refused.
const MaxCommandID = 64

// Commands is the ring of the latest command ids. It is part of the state,
// so snapshots keep it.
type Commands struct {
	IDs []string `json:"ids"`
	// Next is the oldest id's place once the ring is full: the next id
	// replaces it.
	Next int `json:"next,omitempty"`

	seen map[string]struct{} // index of IDs; rebuilt on demand, not in snapshots
}

// Applied reports whether command id was applied to the room.
func (s *State) Applied(id string) bool {
	if id == "" || s.Commands == nil {
		return false
	}
	return s.Commands.has(id)
}

func (c *Commands) has(id string) bool {
	_, ok := c.index()[id]
	return ok
}

func (c *Commands) index() map[string]struct{} {
	if c.seen == nil {
		c.seen = make(map[string]struct{}, len(c.IDs))
		for _, id := range c.IDs {
			c.seen[id] = struct{}{}
		}
	}
	return c.seen
}

// add remembers id, forgetting the oldest beyond MaxCommands.
func (c *Commands) add(id string) {
	if c.has(id) {
		return
	}
	if len(c.IDs) < MaxCommands {
		c.IDs = append(c.IDs, id)
	} else {
		delete(c.seen, c.IDs[c.Next])
		c.IDs[c.Next] = id
		c.Next = (c.Next + 1) % MaxCommands
	}
	c.seen[id] = struct{}{}
}

// applyCommand records the command that wrote e, if any.
func (s *State) applyCommand(e Event) {
	if e.Command == "" {
		return
	}
	if s.Commands == nil {
		s.Commands = &Commands{}
	}
	s.Commands.add(e.Command)
}

// Stamp marks evs as written by command id.
func Stamp(evs []Event, id string) {
	for i := range evs {
		evs[i].Command = id
	}
}
