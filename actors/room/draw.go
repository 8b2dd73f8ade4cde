package room

import (
	"crypto/sha256"
	"encoding/binary"
)

// Draw fixes the admission order of a pre-queue: the numbers From+1 … To
// drawn before a scheduled opening are admitted in the order of a keyed
// pseudo-random permutation of [1, To−From]. The permutation is a Feistel
// network with cycle walking, so it is a bijection, needs no state beyond the
// seed, and any node holding it computes the same positions.
//
// A committed draw (Version 2, docs/draw.md) uses the key fixed and
// committed when the opening was armed, mixed with a beacon round when the
// commitment names one; everything needed to recompute it is public once it
// is made. Draws without a version are the older, uncommitted kind (a key
// drawn at the opening, SplitMix64 rounds); rooms that made them keep their
// order.
type Draw struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
	Key  []byte `json:"key"`
	// At is the draw's time (Unix nanoseconds).
	At int64 `json:"at"`

	// Version is DrawVersion for a committed draw, 0 for the older kind.
	Version int `json:"version,omitempty"`
	// Seed is the permutation's seed: DrawSeed(Key, Beacon.Randomness).
	Seed   []byte      `json:"seed,omitempty"`
	Commit *Commitment `json:"commit,omitempty"`
	// Beacon is the committed round as fetched and verified; nil when the
	// commitment names none or the round could not be had in time.
	Beacon *BeaconRound `json:"beacon,omitempty"`
	// BeaconMissing says why a committed round is not in the seed.
	BeaconMissing string `json:"beaconMissing,omitempty"`
	// ClosedAt is when the pre-queue closed (Unix nanoseconds).
	ClosedAt int64 `json:"closedAt,omitempty"`
}

// Contains reports whether number n is in the drawn pre-queue.
func (d *Draw) Contains(n uint64) bool { return n > d.From && n <= d.To }

// Position returns n's place in admission order; n must be in the draw.
func (d *Draw) Position(n uint64) uint64 { return d.From + 1 + d.shuffle(n-d.From-1, true) }

// Number is the inverse of Position: the number admitted at position p.
func (d *Draw) Number(p uint64) uint64 { return d.From + 1 + d.shuffle(p-d.From-1, false) }

// shuffle maps an offset into the draw through the draw's permutation
// (forward: number to position) or back (position to number), with the
// cipher of the draw's version.
func (d *Draw) shuffle(x uint64, forward bool) uint64 {
	size := d.To - d.From
	if d.Version != DrawVersion {
		if forward {
			return permute(d.Key, size, x)
		}
		return unpermute(d.Key, size, x)
	}
	f, err := newFeistelAES(d.Seed, size)
	switch {
	case err != nil:
		return x
	case forward:
		return f.permute(x)
	}
	return f.unpermute(x)
}

// The older draw: six rounds of SplitMix64 under round keys expanded from
// the key with SHA-256.
const feistelRounds = 6

// permute maps x in [0, size) to a unique value in [0, size).
func permute(key []byte, size, x uint64) uint64 {
	if size <= 1 {
		return x
	}
	ks, h := roundKeys(key), halfBits(size)
	for {
		x = feistel(&ks, h, x, false)
		if x < size {
			return x
		}
	}
}

func unpermute(key []byte, size, y uint64) uint64 {
	if size <= 1 {
		return y
	}
	ks, h := roundKeys(key), halfBits(size)
	for {
		y = feistel(&ks, h, y, true)
		if y < size {
			return y
		}
	}
}

// halfBits returns h such that the Feistel domain [0, 2^(2h)) covers size
// with the least room, so cycle walking takes few steps on average (the
// domain is less than 4× size).
func halfBits(size uint64) uint {
	n := uint(0)
	for (uint64(1) << n) < size {
		n++
	}
	if n < 2 {
		n = 2
	}
	return (n + 1) / 2
}

// roundKeys expands the draw key into one 64-bit key per round.
func roundKeys(key []byte) [feistelRounds]uint64 {
	var ks [feistelRounds]uint64
	sum := sha256.Sum256(append([]byte("aditus-queue draw v1:"), key...))
	for i := range ks {
		if i%4 == 0 && i > 0 {
			sum = sha256.Sum256(sum[:])
		}
		ks[i] = binary.BigEndian.Uint64(sum[(i%4)*8:])
	}
	return ks
}

func feistel(ks *[feistelRounds]uint64, h uint, x uint64, inverse bool) uint64 {
	mask := uint64(1)<<h - 1
	l, r := x>>h&mask, x&mask
	for i := 0; i < feistelRounds; i++ {
		if !inverse {
			l, r = r, l^(mix(r^ks[i])&mask)
		} else {
			l, r = r^(mix(l^ks[feistelRounds-1-i])&mask), l
		}
	}
	return l<<h | r
}

// mix is the SplitMix64 finaliser: a fast bijective 64-bit mixer.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
