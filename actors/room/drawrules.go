package room

import (
	"bytes"
	"crypto/sha256"
	"time"
)

// DrawKey is what arming a committed draw takes from the grain: a fresh
// random key of DrawKeySize bytes, the same key sealed under the master key
// (the rules keep only the sealed form and the key's hash), and the beacon
// chain to name, if one is configured.
type DrawKey struct {
	Key    []byte
	Sealed []byte
	Chain  *Chain
}

// newCommitment commits a draw of room slug closing at closesAt.
func newCommitment(dk DrawKey, slug string, closesAt time.Time, now int64) (*Commitment, error) {
	if len(dk.Key) != DrawKeySize || len(dk.Sealed) == 0 {
		return nil, ErrDrawKey
	}
	if dk.Chain != nil && (len(dk.Chain.Hash) != sha256.Size || dk.Chain.PeriodSeconds <= 0) {
		return nil, ErrBeacon
	}
	kh := sha256.Sum256(dk.Key)
	c := &Commitment{Algorithm: DrawAlgorithm, Version: DrawVersion, Slug: slug, KeyHash: kh[:], Chain: dk.Chain, At: now}
	c.close(closesAt, now)
	return c, nil
}

// close sets the closing time (never before now: a round already
// published cannot be named) and the beacon round due just after it, and
// rehashes.
func (c *Commitment) close(closesAt time.Time, now int64) {
	if t := time.Unix(0, now); closesAt.Before(t) {
		closesAt = t
	}
	c.ClosesAt = closesAt.UnixMilli()
	if c.Chain != nil {
		c.Round = c.Chain.RoundAfter(time.UnixMilli(c.ClosesAt))
	}
	c.Hash = c.ComputeHash()
}

// moved is the commitment after the opening moved to opensAt: same key and
// chain, new time and round, the replaced hash kept. nil when nothing
// changes (no commitment, or the same time).
func (c *Commitment) moved(opensAt *time.Time, now int64) *Commitment {
	if c == nil || opensAt == nil || opensAt.UnixMilli() == c.ClosesAt {
		return nil
	}
	n := *c
	n.Previous = append(append([][]byte(nil), c.Previous...), c.Hash)
	if len(n.Previous) > maxPrevious {
		n.Previous = n.Previous[len(n.Previous)-maxPrevious:]
	}
	n.At = now
	n.close(*opensAt, now)
	if bytes.Equal(n.Hash, c.Hash) {
		return nil
	}
	return &n
}

// openingDue reports whether an armed draw's opening has come.
func (s *State) openingDue(now int64) bool {
	return s.Live() && s.Armed != nil && s.Config.OpensAt != nil && s.Config.OpensAt.UnixNano() <= now
}

// DrawPending reports whether the armed draw is committed and due at now:
// the grain then closes the pre-queue (DecideClose) when the commitment
// names a beacon round, and makes the draw (DecideDraw).
func (s *State) DrawPending(now int64) (*Commitment, bool) {
	if !s.openingDue(now) || s.Armed.Commit == nil {
		return nil, false
	}
	return s.Armed.Commit, true
}

// DecideClose ends the pre-queue of a due committed draw at the numbers
// issued so far, so that numbers handed out while the draw waits for its
// beacon round join behind the drawn group. It returns nothing when there
// is nothing to close.
func (s *State) DecideClose(now int64) []Event {
	if _, ok := s.DrawPending(now); !ok || s.Armed.Closed != nil {
		return nil
	}
	e := s.event(TypeDrawClosed, now, "")
	e.DrawClosed = &Closed{To: s.Issued, At: now}
	return []Event{e}
}

// DrawInput is what the committed draw takes at the opening: the unsealed
// committed key and the committed beacon round, already verified against
// the chain's key; or, when the round could not be had in time, the reason,
// which the reveal states.
type DrawInput struct {
	Key           []byte
	Beacon        *BeaconRound
	BeaconMissing string
}

// DecideDraw makes a due committed draw. It returns ErrDrawKey when in.Key
// is not the committed key and ErrBeacon when the commitment names a round
// and in carries neither that round (with Randomness = SHA-256(Signature))
// nor a reason for its absence; nothing when no committed draw is due.
func (s *State) DecideDraw(now int64, in DrawInput) ([]Event, error) {
	c, ok := s.DrawPending(now)
	if !ok {
		return nil, nil
	}
	if !c.CheckKey(in.Key) {
		return nil, ErrDrawKey
	}
	// The draw orders places: numbers a restore made nobody's are not in
	// it (restore.go).
	d := &Draw{From: s.compact(s.Armed.From), To: s.Places(), Key: append([]byte(nil), in.Key...), At: now,
		Version: DrawVersion, Commit: c, ClosedAt: now}
	if cl := s.Armed.Closed; cl != nil {
		d.To, d.ClosedAt = s.compact(cl.To), cl.At
	}
	var randomness []byte
	switch {
	case c.Chain == nil:
	case in.Beacon != nil:
		b := in.Beacon
		sum := sha256.Sum256(b.Signature)
		if b.Round != c.Round || !bytes.Equal(b.Randomness, sum[:]) {
			return nil, ErrBeacon
		}
		d.Beacon, randomness = b, b.Randomness
	case in.BeaconMissing != "":
		d.BeaconMissing = in.BeaconMissing
	default:
		return nil, ErrBeacon
	}
	d.Seed = DrawSeed(in.Key, randomness)
	e := s.event(TypeDrawn, now, "")
	e.Drawn = d
	line := Line{Base: s.Line.Base, T0: now, Rate: lineRate(&s.Config, false)}
	e.Line = &line
	return []Event{e}, nil
}
