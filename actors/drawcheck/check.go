// Package drawcheck verifies a revealed draw from its public parts alone,
// as docs/draw.md specifies: the commitment's hash, the key's hash, the
// beacon chain and round with its signature, the seed, and the positions
// recomputed. `aditus-queue draw verify` prints its steps.
package drawcheck

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Step is one check and its outcome. A note is a step that passes but that
// a reader should know of (a draw made without its beacon round).
type Step struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Note   bool   `json:"note,omitempty"`
	Detail string `json:"detail"`
}

// Report is the outcome of a verification.
type Report struct {
	Steps []Step `json:"steps"`
}

// OK reports whether every step passed.
func (r *Report) OK() bool {
	for _, s := range r.Steps {
		if !s.OK {
			return false
		}
	}
	return len(r.Steps) > 0
}

func (r *Report) add(name string, ok bool, format string, args ...any) bool {
	r.Steps = append(r.Steps, Step{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	return ok
}

func (r *Report) note(name, format string, args ...any) {
	r.Steps = append(r.Steps, Step{Name: name, OK: true, Note: true, Detail: fmt.Sprintf(format, args...)})
}

// Draw is a checked reveal: its seed and range, to recompute positions.
type Draw struct {
	Seed     []byte
	From, To uint64
}

// Position is number n's drawn place, From+1+π(n−From−1).
func (d *Draw) Position(n uint64) (uint64, error) {
	if n <= d.From || n > d.To {
		return 0, fmt.Errorf("number %d is not in the draw (%d … %d)", n, d.From+1, d.To)
	}
	x, err := room.DrawPermute(d.Seed, d.To-d.From, n-d.From-1)
	return d.From + 1 + x, err
}

func unhex(s string, n int) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if n > 0 && len(b) != n {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), n)
	}
	return b, nil
}

// commitment rebuilds the committed fields from their public form.
func commitment(p *room.PublicCommitment) (*room.Commitment, error) {
	c := &room.Commitment{Algorithm: p.Algorithm, Version: p.Version, Slug: p.Queue, ClosesAt: p.ClosesAtMs}
	var err error
	if c.KeyHash, err = unhex(p.KeyHash, 32); err != nil {
		return nil, fmt.Errorf("keyHash: %w", err)
	}
	if b := p.Beacon; b != nil {
		ch := &room.Chain{Scheme: b.Scheme, GenesisTime: b.GenesisTime, PeriodSeconds: b.Period, BeaconID: b.BeaconID}
		if ch.Hash, err = unhex(b.Hash, 32); err != nil {
			return nil, fmt.Errorf("beacon.chainHash: %w", err)
		}
		if ch.PublicKey, err = unhex(b.PublicKey, 0); err != nil {
			return nil, fmt.Errorf("beacon.publicKey: %w", err)
		}
		if ch.GenesisSeed, err = unhex(b.GenesisSeed, 0); err != nil {
			return nil, fmt.Errorf("beacon.genesisSeed: %w", err)
		}
		c.Chain, c.Round = ch, b.Round
	}
	return c, nil
}

// Check verifies rev. published, when given, is the commitment as /info
// showed it before the draw: the reveal's commitment must be it or replace
// it (a moved opening). The returned Draw recomputes positions; it is nil
// when a step failed.
func Check(rev *room.Reveal, published *room.PublicCommitment) (Report, *Draw) {
	var r Report
	pc := &rev.Commitment
	if !r.add("algorithm", rev.Algorithm == room.DrawAlgorithm && rev.Version == room.DrawVersion &&
		pc.Algorithm == rev.Algorithm && pc.Version == rev.Version,
		"%s version %d", rev.Algorithm, rev.Version) {
		return r, nil
	}
	c, err := commitment(pc)
	if err != nil {
		r.add("commitment", false, "malformed: %v", err)
		return r, nil
	}
	want, _ := unhex(pc.Hash, 32)
	got := c.ComputeHash()
	if !r.add("commitment", bytes.Equal(got, want), "SHA-256 of the committed bytes is %x; the room published %s", got, pc.Hash) {
		return r, nil
	}
	if published != nil {
		ok := published.Hash == pc.Hash
		for _, p := range pc.Previous {
			ok = ok || p == published.Hash
		}
		if !r.add("published", ok, "the commitment shown before the draw, %s, is this one or one it replaced", published.Hash) {
			return r, nil
		}
	}
	key, err := unhex(rev.Key, room.DrawKeySize)
	if err != nil {
		r.add("key", false, "malformed key: %v", err)
		return r, nil
	}
	kh := sha256.Sum256(key)
	if !r.add("key", bytes.Equal(kh[:], c.KeyHash), "SHA-256(key) = %x; committed %x", kh[:], c.KeyHash) {
		return r, nil
	}
	randomness, ok := checkBeacon(&r, rev, c)
	if !ok {
		return r, nil
	}
	seed := key
	if randomness != nil {
		m := hmac.New(sha256.New, key)
		m.Write(randomness)
		seed = m.Sum(nil)
	}
	if !r.add("seed", hex.EncodeToString(seed) == rev.Seed, "seed %x (%s)", seed, map[bool]string{true: "HMAC-SHA256(key, randomness)", false: "the key alone"}[randomness != nil]) {
		return r, nil
	}
	if !r.add("range", rev.To >= rev.From && rev.Size == rev.To-rev.From && rev.Size <= room.MaxDrawSize,
		"numbers %d … %d, %d of them", rev.From+1, rev.To, rev.Size) {
		return r, nil
	}
	return r, &Draw{Seed: seed, From: rev.From, To: rev.To}
}

// checkBeacon checks the chain, the round and its signature; it returns the
// randomness to mix in (nil: none) and whether to go on.
func checkBeacon(r *Report, rev *room.Reveal, c *room.Commitment) ([]byte, bool) {
	if c.Chain == nil {
		if rev.Beacon != nil {
			return nil, r.add("beacon", false, "the reveal carries a round the commitment did not name")
		}
		r.note("beacon", "the commitment names no beacon: the order rests on the key alone")
		return nil, true
	}
	if !r.add("chain", bytes.Equal(beacon.ChainHash(c.Chain), c.Chain.Hash), "drand chain %x (%s)", c.Chain.Hash, c.Chain.Scheme) {
		return nil, false
	}
	due := c.Chain.RoundAfter(timeMs(c.ClosesAt))
	if !r.add("round", c.Round == due, "round %d is the first published after the pre-queue closes (%d)", c.Round, due) {
		return nil, false
	}
	if rev.Beacon != nil {
		at := c.Chain.RoundTime(c.Round).UnixMilli()
		if !r.add("timing", rev.ClosedAtMs < at, "the pre-queue closed at %s, before round %d was published (%s)",
			timeMs(rev.ClosedAtMs).UTC().Format(time.RFC3339Nano), c.Round, timeMs(at).UTC().Format(time.RFC3339)) {
			return nil, false
		}
	}
	if rev.Beacon == nil {
		if rev.BeaconMissing == "" {
			return nil, r.add("beacon", false, "the committed round %d is missing without a reason", c.Round)
		}
		r.note("beacon", "the draw was made with the key alone: %s", rev.BeaconMissing)
		return nil, true
	}
	b := room.BeaconRound{Round: rev.Beacon.Round}
	var err error
	if b.Randomness, err = unhex(rev.Beacon.Randomness, 32); err == nil {
		if b.Signature, err = unhex(rev.Beacon.Signature, 0); err == nil {
			b.PreviousSignature, err = unhex(rev.Beacon.PreviousSignature, 0)
		}
	}
	if err != nil {
		return nil, r.add("beacon", false, "malformed round: %v", err)
	}
	if !r.add("beacon", b.Round == c.Round, "round %d, committed %d", b.Round, c.Round) {
		return nil, false
	}
	if err := beacon.Verify(c.Chain, &b); err != nil {
		return nil, r.add("signature", false, "%v", err)
	}
	r.add("signature", true, "BLS signature of round %d verifies under the chain's key; randomness %x", b.Round, b.Randomness)
	return b.Randomness, true
}

// MaxBijection bounds the draws whose whole permutation Bijection walks.
const MaxBijection = 1 << 22

// Bijection recomputes every position and checks that each place is taken
// exactly once (draws up to MaxBijection numbers).
func (d *Draw) Bijection() error {
	size := d.To - d.From
	if size > MaxBijection {
		return fmt.Errorf("%d numbers: more than the %d this check walks", size, MaxBijection)
	}
	seen := make([]bool, size)
	for x := uint64(0); x < size; x++ {
		y, err := room.DrawPermute(d.Seed, size, x)
		if err != nil {
			return err
		}
		if seen[y] {
			return fmt.Errorf("place %d given twice", d.From+1+y)
		}
		seen[y] = true
	}
	return nil
}
