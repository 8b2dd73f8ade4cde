package room

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/versioned"
)

// EventVersion is the newest encoding of a room's events (package versioned
// writes it and refuses newer ones); a change of meaning needs a new version
// and testdata/events.golden.
const EventVersion = 1

// Event is one change of a room, as it stands in the room's log. Exactly one
// payload pointer is set, matching Type. Events are applied by State.Apply;
// an event that moves the admission line carries the new line explicitly, so
// replay never recomputes it from values that are not in the log.
type Event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	// Needs names the features the event uses beyond its first form, each
	// with the release that brought it (features.go); Encode sets it.
	Needs map[string]string `json:"needs,omitempty"`
	// Epoch names the activation that wrote the event: the log offset of its
	// Activated marker. Events of a superseded activation are ignored.
	Epoch int64 `json:"epoch,omitempty"`
	// At is the time of the change, Unix nanoseconds.
	At int64 `json:"at"`
	// Actor is who made an administrative change: "admin" or "key:<name>".
	Actor string `json:"actor,omitempty"`
	// Command is the id of the caller's command that wrote the event
	// (commands.go), so a retry of it is not applied again.
	Command string `json:"command,omitempty"`
	Line    *Line  `json:"line,omitempty"`

	Activated     *Activated     `json:"activated,omitempty"`
	Created       *Created       `json:"created,omitempty"`
	Reserved      *Reserved      `json:"reserved,omitempty"`
	Checkpoint    *Checkpoint    `json:"checkpoint,omitempty"`
	Configured    *Configured    `json:"configured,omitempty"`
	SecretRotated *SecretRotated `json:"secretRotated,omitempty"`
	KeyAdded      *KeyAdded      `json:"keyAdded,omitempty"`
	KeyRemoved    *ItemRemoved   `json:"keyRemoved,omitempty"`
	CodeAdded     *CodeAdded     `json:"codeAdded,omitempty"`
	CodeChanged   *CodeChanged   `json:"codeChanged,omitempty"`
	CodeRemoved   *ItemRemoved   `json:"codeRemoved,omitempty"`
	CodeRedeemed  *CodeRedeemed  `json:"codeRedeemed,omitempty"`
	Drawn         *Draw          `json:"drawn,omitempty"`
	DrawClosed    *Closed        `json:"drawClosed,omitempty"`
	Abandoned     *Abandoned     `json:"abandoned,omitempty"`
	Deleted       *struct{}      `json:"deleted,omitempty"`
	RateAdjusted  *RateChange    `json:"rateAdjusted,omitempty"`
	HealthTested  *HealthTested  `json:"healthTested,omitempty"`
	Restored      *Restored      `json:"restored,omitempty"`
	Returned      *Returned      `json:"returned,omitempty"`
}

// Event types.
const (
	TypeActivated     = "activated"
	TypeCreated       = "created"
	TypeReserved      = "reserved"
	TypeCheckpoint    = "checkpoint"
	TypeConfigured    = "configured"
	TypeSecretRotated = "secretRotated"
	TypeKeyAdded      = "keyAdded"
	TypeKeyRemoved    = "keyRemoved"
	TypeCodeAdded     = "codeAdded"
	TypeCodeChanged   = "codeChanged"
	TypeCodeRemoved   = "codeRemoved"
	TypeCodeRedeemed  = "codeRedeemed"
	TypeDrawn         = "drawn"
	TypeDrawClosed    = "drawClosed"
	TypeAbandoned     = "abandoned"
	TypeDeleted       = "deleted"
	TypeRateAdjusted  = "rateAdjusted"
	TypeHealthTested  = "healthTested"
	TypeRestored      = "restored"
	TypeReturned      = "returned"
)

// HealthTested records a passing health-check test of URL; enabling the
// self-regulating rate with that URL needs one.
type HealthTested struct {
	URL string `json:"url"`
}

// Activated marks the start of an activation of the room grain (fencing).
type Activated struct {
	// Nonce tells two activations apart whatever their members' clocks say.
	Nonce string `json:"nonce"`
}

// Created is the room's first event.
type Created struct {
	Config Config `json:"config"`
	// Phase is the event and stage of Config.Events in force.
	Phase Phase `json:"phase,omitzero"`
	// SecretSealed is the token signing secret, sealed under the master key.
	SecretSealed []byte `json:"secretSealed"`
	// TicketKeySealed signs tickets and proof-of-work challenges.
	TicketKeySealed []byte `json:"ticketKeySealed"`
	// Commit and DrawKeySealed arm the draw of a room created with a future
	// opening: the public commitment and the key sealed under the master key.
	Commit        *Commitment `json:"commit,omitempty"`
	DrawKeySealed []byte      `json:"drawKeySealed,omitempty"`
}

// Reserved makes the numbers up to UpTo available to the activation that
// wrote it. After a crash, numbers continue above the highest reservation.
type Reserved struct {
	UpTo uint64 `json:"upTo"`
}

// Checkpoint records how many numbers were really handed out. A final
// checkpoint (graceful stop) also releases the rest of the reservation, so
// the next activation continues without a gap.
type Checkpoint struct {
	Issued uint64 `json:"issued"`
	Final  bool   `json:"final,omitempty"`
}

// Configured replaces the configuration.
type Configured struct {
	Config Config `json:"config"`
	// Phase is the event and stage of Config.Events in force.
	Phase Phase `json:"phase,omitzero"`
	// Arm, when set, arms a draw over the numbers issued after Arm.From
	// until the opening.
	Arm *Arm `json:"arm,omitempty"`
	// Disarm drops an armed draw (opening removed).
	Disarm bool `json:"disarm,omitempty"`
	// DrawKeySealed is the new arm's draw key, sealed.
	DrawKeySealed []byte `json:"drawKeySealed,omitempty"`
	// Recommit replaces the armed draw's commitment when the opening moves:
	// same key, new closing time and beacon round.
	Recommit *Commitment `json:"recommit,omitempty"`
}

// Arm is a pending draw waiting for the opening.
type Arm struct {
	From uint64 `json:"from"`
	// Commit is the draw's public commitment; nil for an arm written before
	// draws were committed.
	Commit *Commitment `json:"commit,omitempty"`
	// Closed is set once the opening came and the draw waits for its
	// beacon round: the pre-queue ends at Closed.To.
	Closed *Closed `json:"closed,omitempty"`
}

// Closed ends a pre-queue whose draw waits for its beacon round.
type Closed struct {
	To uint64 `json:"to"`
	// At is when the pre-queue closed (Unix nanoseconds).
	At int64 `json:"at"`
}

// SecretRotated replaces the token signing secret.
type SecretRotated struct {
	SecretSealed []byte `json:"secretSealed"`
}

// KeyAdded adds an API key; only its hash is stored.
type KeyAdded struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Hash []byte `json:"hash"`
}

// ItemRemoved removes a key or a bypass code.
type ItemRemoved struct {
	ID string `json:"id"`
}

// CodeAdded adds a bypass code; only its hash is stored.
type CodeAdded struct {
	ID         string     `json:"id"`
	Label      string     `json:"label"`
	Hash       []byte     `json:"hash"`
	UsageLimit *int       `json:"usageLimit,omitempty"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
}

// CodeChanged enables or disables a bypass code.
type CodeChanged struct {
	ID       string `json:"id"`
	Disabled bool   `json:"disabled"`
}

// CodeRedeemed counts one use of a bypass code.
type CodeRedeemed struct {
	ID string `json:"id"`
}

// Abandoned moves the admission window over Count numbers that went silent
// ahead of it; Cursor is the highest position examined so far.
type Abandoned struct {
	Count  uint64 `json:"count"`
	Cursor uint64 `json:"cursor"`
}

// Encode returns the event's log encoding.
func (e *Event) Encode() ([]byte, error) {
	e.Needs = e.needs()
	return versioned.Encode(e, &e.V, EventVersion)
}

// DecodeEvent parses an event from the log.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	if err := versioned.Decode(b, &e, &e.V, EventVersion, "event"); err != nil {
		return e, err
	}
	return e, e.checkNeeds()
}
