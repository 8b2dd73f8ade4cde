package room

import (
	"encoding/hex"
	"time"
)

// The public forms of a draw's commitment and reveal, as /info and
// /queue/<slug>/draw answer them (docs/draw.md): byte strings in lower-case
// hex, times in RFC 3339 with milliseconds and in Unix milliseconds.

// PublicChain is the beacon chain a commitment names.
type PublicChain struct {
	Hash        string `json:"chainHash"`
	Scheme      string `json:"scheme"`
	PublicKey   string `json:"publicKey"`
	GenesisTime int64  `json:"genesisTime"`
	Period      int64  `json:"period"`
	GenesisSeed string `json:"genesisSeed"`
	BeaconID    string `json:"beaconId,omitempty"`
	// Round is the committed round and RoundTime when it is published.
	Round     uint64 `json:"round"`
	RoundTime string `json:"roundTime"`
}

// PublicCommitment is a commitment as published.
type PublicCommitment struct {
	Hash        string       `json:"commitment"`
	Algorithm   string       `json:"algorithm"`
	Version     int          `json:"version"`
	Queue       string       `json:"queue"`
	ClosesAt    string       `json:"closesAt"`
	ClosesAtMs  int64        `json:"closesAtMs"`
	KeyHash     string       `json:"keyHash"`
	Beacon      *PublicChain `json:"beacon,omitempty"`
	Previous    []string     `json:"previous,omitempty"`
	CommittedAt string       `json:"committedAt"`
}

// PublicRound is the beacon round a draw used.
type PublicRound struct {
	Round             uint64 `json:"round"`
	Randomness        string `json:"randomness"`
	Signature         string `json:"signature"`
	PreviousSignature string `json:"previousSignature,omitempty"`
}

// Reveal is everything needed to recompute every position of a draw.
type Reveal struct {
	Queue      string           `json:"queue"`
	Algorithm  string           `json:"algorithm"`
	Version    int              `json:"version"`
	Commitment PublicCommitment `json:"commitment"`
	Key        string           `json:"key"`
	// Beacon is the round mixed in; nil with BeaconMissing saying why when
	// the commitment named one, nil alone when it named none.
	Beacon        *PublicRound `json:"beacon"`
	BeaconMissing string       `json:"beaconMissing,omitempty"`
	Seed          string       `json:"seed"`
	// From and To bound the drawn numbers: From+1 … To, Size of them.
	From     uint64 `json:"from"`
	To       uint64 `json:"to"`
	Size     uint64 `json:"size"`
	ClosedAt string `json:"closedAt"`
	// ClosedAtMs is ClosedAt in Unix milliseconds: a committed round must be
	// published after it.
	ClosedAtMs int64  `json:"closedAtMs"`
	DrawnAt    string `json:"drawnAt"`
}

func rfc3339(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// Public is c as published.
func (c *Commitment) Public() PublicCommitment {
	p := PublicCommitment{Hash: hex.EncodeToString(c.Hash), Algorithm: c.Algorithm, Version: c.Version, Queue: c.Slug,
		ClosesAt: rfc3339(time.UnixMilli(c.ClosesAt)), ClosesAtMs: c.ClosesAt, KeyHash: hex.EncodeToString(c.KeyHash),
		CommittedAt: rfc3339(time.Unix(0, c.At))}
	for _, h := range c.Previous {
		p.Previous = append(p.Previous, hex.EncodeToString(h))
	}
	if ch := c.Chain; ch != nil {
		p.Beacon = &PublicChain{Hash: hex.EncodeToString(ch.Hash), Scheme: ch.Scheme, PublicKey: hex.EncodeToString(ch.PublicKey),
			GenesisTime: ch.GenesisTime, Period: ch.PeriodSeconds, GenesisSeed: hex.EncodeToString(ch.GenesisSeed),
			BeaconID: ch.BeaconID, Round: c.Round, RoundTime: rfc3339(ch.RoundTime(c.Round))}
	}
	return p
}

// Reveal is d as published; ok is false for a draw without a commitment.
func (d *Draw) Reveal() (Reveal, bool) {
	if d.Version != DrawVersion || d.Commit == nil {
		return Reveal{}, false
	}
	r := Reveal{Queue: d.Commit.Slug, Algorithm: d.Commit.Algorithm, Version: d.Version, Commitment: d.Commit.Public(),
		Key: hex.EncodeToString(d.Key), BeaconMissing: d.BeaconMissing, Seed: hex.EncodeToString(d.Seed),
		From: d.From, To: d.To, Size: d.To - d.From, ClosedAt: rfc3339(time.Unix(0, d.ClosedAt)), ClosedAtMs: time.Unix(0, d.ClosedAt).UnixMilli(),
		DrawnAt: rfc3339(time.Unix(0, d.At))}
	if b := d.Beacon; b != nil {
		r.Beacon = &PublicRound{Round: b.Round, Randomness: hex.EncodeToString(b.Randomness),
			Signature: hex.EncodeToString(b.Signature), PreviousSignature: hex.EncodeToString(b.PreviousSignature)}
	}
	return r, true
}

// LatestCommitted returns the newest committed draw, if any.
func (v *View) LatestCommitted() (*Draw, bool) {
	for i := len(v.Draws) - 1; i >= 0; i-- {
		if v.Draws[i].Version == DrawVersion && v.Draws[i].Commit != nil {
			return &v.Draws[i], true
		}
	}
	return nil, false
}

// DrawState is the draw's public state: "sealed" while the commitment
// stands and the pre-queue is open, "closed" while the draw waits for its
// beacon round, "drawn" once made; "" without a committed draw.
func (v *View) DrawState() (string, *Commitment) {
	if a := v.Armed; a != nil && a.Commit != nil {
		if a.Closed != nil {
			return "closed", a.Commit
		}
		return "sealed", a.Commit
	}
	if d, ok := v.LatestCommitted(); ok {
		return "drawn", d.Commit
	}
	return "", nil
}
