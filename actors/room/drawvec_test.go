package room_test

import (
	"bytes"
	"crypto/aes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The test vectors of docs/draw.md: other verifiers (the page's, and any
// written from the specification) are checked against this file.
const vectorsPath = "testdata/draw_vectors.json"

// DrawVectors is the layout of testdata/draw_vectors.json.
type DrawVectors struct {
	Commitments  []CommitmentVector  `json:"commitments"`
	Rounds       []RoundVector       `json:"rounds"`
	Permutations []PermutationVector `json:"permutations"`
	Draws        []DrawVector        `json:"draws"`
}

// CommitmentVector: the committed fields, the hashed bytes and the hash.
type CommitmentVector struct {
	Slug      string `json:"slug"`
	ClosesAt  int64  `json:"closesAt"`
	Key       string `json:"key"`
	KeyHash   string `json:"keyHash"`
	ChainHash string `json:"chainHash,omitempty"`
	Round     uint64 `json:"round,omitempty"`
	Bytes     string `json:"bytes"`
	Hash      string `json:"hash"`
}

// RoundVector: one AES block of the round function.
type RoundVector struct {
	Seed   string `json:"seed"`
	Size   uint64 `json:"size"`
	H      uint   `json:"h"`
	Round  int    `json:"round"`
	R      uint64 `json:"r"`
	Block  string `json:"block"`
	Output string `json:"output"`
	F      uint64 `json:"f"`
}

// PermutationVector: π over [0, size) under seed, for the listed x.
type PermutationVector struct {
	Seed  string   `json:"seed"`
	Size  uint64   `json:"size"`
	X     []uint64 `json:"x"`
	Image []uint64 `json:"image"`
}

// DrawVector: a whole draw from key and beacon randomness to positions.
type DrawVector struct {
	Key        string   `json:"key"`
	Randomness string   `json:"randomness,omitempty"`
	Seed       string   `json:"seed"`
	From       uint64   `json:"from"`
	To         uint64   `json:"to"`
	Numbers    []uint64 `json:"numbers"`
	Positions  []uint64 `json:"positions"`
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

func seq(from, to uint64) []uint64 {
	var s []uint64
	for x := from; x < to; x++ {
		s = append(s, x)
	}
	return s
}

// vectorSeed is a fixed, recognisable seed: bytes 0x00 … 0x1f.
func vectorSeed(b byte) string {
	s := make([]byte, 32)
	for i := range s {
		s[i] = byte(i) + b
	}
	return hex.EncodeToString(s)
}

func computeVectors(t *testing.T) DrawVectors {
	var v DrawVectors
	chainHash := "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971" // quicknet
	for _, c := range []struct {
		slug      string
		closesAt  int64
		key       string
		chainHash string
		round     uint64
	}{
		{"winter-sale", 1796140800000, vectorSeed(0x40), "", 0},
		// Round 34445813 is the first quicknet round after 1796140800000 ms
		// (docs/draw.md, section 3).
		{"winter-sale", 1796140800000, vectorSeed(0x40), chainHash, 34445813},
		{"a", 0, vectorSeed(0x80), chainHash, 1},
	} {
		key := unhex(t, c.key)
		cm := room.Commitment{Algorithm: room.DrawAlgorithm, Version: room.DrawVersion, Slug: c.slug, ClosesAt: c.closesAt}
		kh := sha256Sum(key)
		cm.KeyHash = kh
		if c.chainHash != "" {
			cm.Chain, cm.Round = &room.Chain{Hash: unhex(t, c.chainHash)}, c.round
		}
		v.Commitments = append(v.Commitments, CommitmentVector{Slug: c.slug, ClosesAt: c.closesAt, Key: c.key,
			KeyHash: hex.EncodeToString(kh), ChainHash: c.chainHash, Round: c.round,
			Bytes: hex.EncodeToString(cm.CommitmentBytes()), Hash: hex.EncodeToString(cm.ComputeHash())})
	}
	for _, r := range []struct {
		size  uint64
		round int
		r     uint64
	}{{5, 0, 3}, {1000, 9, 17}, {1 << 40, 4, 0xfffff}} {
		seed := unhex(t, vectorSeed(0))
		h := room.DrawHalfBits(r.size)
		block := room.DrawRoundBlock(r.size, h, r.round, r.r)
		c, err := aes.NewCipher(seed)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 16)
		c.Encrypt(out, block)
		v.Rounds = append(v.Rounds, RoundVector{Seed: vectorSeed(0), Size: r.size, H: h, Round: r.round, R: r.r,
			Block: hex.EncodeToString(block), Output: hex.EncodeToString(out), F: room.DrawRound(seed, r.size, r.round, r.r)})
	}
	for _, p := range []struct {
		seed string
		size uint64
		x    []uint64
	}{
		{vectorSeed(0), 1, seq(0, 1)},
		{vectorSeed(0), 2, seq(0, 2)},
		{vectorSeed(0), 3, seq(0, 3)},
		{vectorSeed(0), 5, seq(0, 5)},
		{vectorSeed(0), 10, seq(0, 10)},
		{vectorSeed(1), 10, seq(0, 10)},
		{vectorSeed(0), 17, seq(0, 17)},
		{vectorSeed(0), 1000, []uint64{0, 1, 2, 499, 998, 999}},
		{vectorSeed(0), 1_000_003, []uint64{0, 1, 123456, 1_000_002}},
		{vectorSeed(0), 1 << 40, []uint64{0, 1, 1<<40 - 1}},
	} {
		pv := PermutationVector{Seed: p.seed, Size: p.size, X: p.x}
		for _, x := range p.x {
			y, err := room.DrawPermute(unhex(t, p.seed), p.size, x)
			if err != nil {
				t.Fatal(err)
			}
			pv.Image = append(pv.Image, y)
		}
		v.Permutations = append(v.Permutations, pv)
	}
	for _, d := range []struct {
		key, randomness string
		from, to        uint64
		numbers         []uint64
	}{
		{vectorSeed(0x40), "", 0, 12, seq(1, 13)},
		{vectorSeed(0x40), vectorSeed(0xa0), 0, 12, seq(1, 13)},
		{vectorSeed(0x40), vectorSeed(0xa0), 300, 100_300, []uint64{301, 302, 50_000, 100_300}},
		// quicknet round 657413's randomness (a recorded real round).
		{vectorSeed(0x40), "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587", 0, 30, seq(1, 31)},
	} {
		key := unhex(t, d.key)
		var rnd []byte
		if d.randomness != "" {
			rnd = unhex(t, d.randomness)
		}
		seed := room.DrawSeed(key, rnd)
		dr := room.Draw{From: d.from, To: d.to, Key: key, Version: room.DrawVersion, Seed: seed}
		dv := DrawVector{Key: d.key, Randomness: d.randomness, Seed: hex.EncodeToString(seed), From: d.from, To: d.to, Numbers: d.numbers}
		for _, n := range d.numbers {
			dv.Positions = append(dv.Positions, dr.Position(n))
		}
		v.Draws = append(v.Draws, dv)
	}
	return v
}

// TestDrawVectors keeps testdata/draw_vectors.json (also printed in
// docs/draw.md) in step with the implementation; -update rewrites it.
func TestDrawVectors(t *testing.T) {
	b, err := json.MarshalIndent(computeVectors(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(vectorsPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("the draw's vectors changed; a change of algorithm needs a new version (and -update)")
	}
}

// A commitment vector that names a round names the one section 3 of
// docs/draw.md gives for its closing time (quicknet: genesis 1692803367,
// period 3 s), as a room would.
func TestDrawVectorRounds(t *testing.T) {
	quicknet := room.Chain{GenesisTime: 1692803367, PeriodSeconds: 3}
	for _, c := range computeVectors(t).Commitments {
		if c.ChainHash == "" || c.ClosesAt == 0 {
			continue
		}
		if due := quicknet.RoundAfter(time.UnixMilli(c.ClosesAt)); c.Round != due {
			t.Errorf("commitment vector closing at %d ms names round %d, want %d", c.ClosesAt, c.Round, due)
		}
	}
}

func sha256Sum(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}
