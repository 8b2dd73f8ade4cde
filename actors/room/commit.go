package room

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"time"
)

// DrawKeySize is the length of a committed draw's key.
const DrawKeySize = 32

// commitDomain opens every commitment's hashed bytes (docs/draw.md).
const commitDomain = "aditus-queue/draw-commitment"

// Chain names a public randomness beacon (a drand chain) whose round the
// draw mixes in. Hash is the chain hash, which drand derives from the rest.
type Chain struct {
	Hash []byte `json:"hash"`
	// PublicKey is the chain's BLS12-381 group public key (compressed).
	PublicKey []byte `json:"publicKey"`
	// Scheme is drand's scheme id: "pedersen-bls-chained" (key on G1,
	// signatures on G2 over the previous signature and the round) or
	// "bls-unchained-g1-rfc9380" (signatures on G1 over the round).
	Scheme string `json:"scheme"`
	// GenesisTime is the Unix second of round 1; round r is published at
	// GenesisTime + (r−1)·PeriodSeconds.
	GenesisTime   int64 `json:"genesisTime"`
	PeriodSeconds int64 `json:"periodSeconds"`
	// GenesisSeed and BeaconID complete drand's chain hash.
	GenesisSeed []byte `json:"genesisSeed,omitempty"`
	BeaconID    string `json:"beaconId,omitempty"`
}

// RoundAfter is the first round published strictly after t: the round a
// pre-queue closing at t waits for, whose value nobody knew while it was
// open.
func (c *Chain) RoundAfter(t time.Time) uint64 {
	ms := t.UnixMilli() - c.GenesisTime*1000
	if ms < 0 {
		return 1
	}
	return uint64(ms/(c.PeriodSeconds*1000)) + 2
}

// RoundTime is when round r is published.
func (c *Chain) RoundTime(r uint64) time.Time {
	return time.Unix(c.GenesisTime+int64(r-1)*c.PeriodSeconds, 0)
}

// Commitment is what a room publishes when it arms a draw: the hash binds
// the key (through its SHA-256), the algorithm, the room, the time the
// pre-queue closes and the beacon round, so none of them can change unseen.
type Commitment struct {
	Hash      []byte `json:"hash"`
	Algorithm string `json:"algorithm"`
	Version   int    `json:"version"`
	Slug      string `json:"slug"`
	// ClosesAt is the scheduled end of the pre-queue (Unix milliseconds).
	ClosesAt int64  `json:"closesAt"`
	KeyHash  []byte `json:"keyHash"`
	// Chain and Round name the beacon round mixed into the seed; nil: the
	// draw uses the key alone.
	Chain *Chain `json:"chain,omitempty"`
	Round uint64 `json:"round,omitempty"`
	// Previous are the hashes this commitment replaced when the opening
	// moved (same key, new time and round), oldest first.
	Previous [][]byte `json:"previous,omitempty"`
	// At is when the room committed (Unix nanoseconds).
	At int64 `json:"at"`
}

// maxPrevious bounds a commitment's history of moved openings.
const maxPrevious = 16

// CommitmentBytes is the byte string whose SHA-256 is the commitment's hash
// (docs/draw.md, "Commitment").
func (c *Commitment) CommitmentBytes() []byte {
	b := appendStr(nil, commitDomain)
	b = appendStr(b, c.Algorithm)
	b = append(b, byte(c.Version))
	b = appendStr(b, c.Slug)
	b = binary.BigEndian.AppendUint64(b, uint64(c.ClosesAt))
	b = append(b, c.KeyHash...)
	if c.Chain == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = append(b, c.Chain.Hash...)
	return binary.BigEndian.AppendUint64(b, c.Round)
}

func appendStr(b []byte, s string) []byte {
	return append(append(b, byte(len(s))), s...)
}

// ComputeHash returns SHA-256 of CommitmentBytes.
func (c *Commitment) ComputeHash() []byte {
	h := sha256.Sum256(c.CommitmentBytes())
	return h[:]
}

// Errors of the committed draw.
var (
	// ErrDrawKey refuses a key that is missing, malformed or not the
	// committed one.
	ErrDrawKey = errors.New("draw key does not match the commitment")
	// ErrBeacon refuses a draw without the committed beacon round and
	// without a stated reason for its absence.
	ErrBeacon = errors.New("beacon round missing")
)

// CheckKey reports whether key is the committed key (constant time).
func (c *Commitment) CheckKey(key []byte) bool {
	if len(key) != DrawKeySize {
		return false
	}
	h := sha256.Sum256(key)
	return subtle.ConstantTimeCompare(h[:], c.KeyHash) == 1
}

// BeaconRound is one published round of the beacon: Randomness is
// SHA-256(Signature); chained schemes sign PreviousSignature too.
type BeaconRound struct {
	Round             uint64 `json:"round"`
	Randomness        []byte `json:"randomness"`
	Signature         []byte `json:"signature"`
	PreviousSignature []byte `json:"previousSignature,omitempty"`
}

// DrawSeed is the permutation's seed: HMAC-SHA256(key, randomness) with a
// beacon round, the key itself without.
func DrawSeed(key, randomness []byte) []byte {
	if randomness == nil {
		return append([]byte(nil), key...)
	}
	m := hmac.New(sha256.New, key)
	m.Write(randomness)
	return m.Sum(nil)
}
