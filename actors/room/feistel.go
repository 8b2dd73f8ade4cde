package room

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"math/bits"
)

// The committed draw's permutation (docs/draw.md, "feistel-aes256"
// version 2): a balanced Feistel network over 2h-bit values whose round
// function is AES-256 under the draw's seed, with cycle walking onto
// [0, size). AES makes the rounds a keyed pseudo-random function that any
// language's standard library can evaluate, the browser's Web Crypto
// included.
const (
	// DrawAlgorithm and DrawVersion name the committed draw's algorithm.
	DrawAlgorithm = "feistel-aes256"
	DrawVersion   = 2
	// DrawRounds is the Feistel network's round count.
	DrawRounds = 10
	// MaxDrawSize is the largest pre-queue the algorithm orders: the halves
	// of a 62-bit value fit the round block's 32-bit field.
	MaxDrawSize = uint64(1) << 62
)

// feistelAES is the permutation of [0, size) under one seed.
type feistelAES struct {
	block cipher.Block
	size  uint64
	h     uint
	mask  uint64
	// in and out are the round's AES blocks, kept here so that the call
	// through the cipher.Block interface does not move them to the heap
	// each round. A feistelAES is therefore used by one goroutine.
	in, out [16]byte
}

// newFeistelAES prepares the permutation; seed must be 32 bytes and size at
// most MaxDrawSize.
func newFeistelAES(seed []byte, size uint64) (*feistelAES, error) {
	if len(seed) != 32 {
		return nil, errors.New("draw: the seed must be 32 bytes")
	}
	if size > MaxDrawSize {
		return nil, errors.New("draw: the pre-queue exceeds 2^62 numbers")
	}
	b, err := aes.NewCipher(seed)
	if err != nil {
		return nil, err
	}
	h := DrawHalfBits(size)
	return &feistelAES{block: b, size: size, h: h, mask: uint64(1)<<h - 1}, nil
}

// DrawHalfBits is h: the Feistel domain [0, 2^(2h)) is the smallest even
// power of two, at least 4, that covers size, so cycle walking takes fewer
// than four steps on average.
func DrawHalfBits(size uint64) uint {
	n := uint(2)
	if size > 1 {
		if b := uint(bits.Len64(size - 1)); b > n {
			n = b
		}
	}
	return (n + 1) / 2
}

// round is F_i(r): the first 8 bytes of AES-256(seed, block), big-endian,
// masked to h bits. The block is version, round, h, a zero byte, size
// (8 bytes) and r (4 bytes), all big-endian.
func (f *feistelAES) round(i int, r uint64) uint64 {
	putRoundBlock(&f.in, f.size, f.h, i, r)
	f.block.Encrypt(f.out[:], f.in[:])
	return binary.BigEndian.Uint64(f.out[:8]) & f.mask
}

func putRoundBlock(in *[16]byte, size uint64, h uint, i int, r uint64) {
	in[0], in[1], in[2] = DrawVersion, byte(i), byte(h)
	binary.BigEndian.PutUint64(in[4:12], size)
	binary.BigEndian.PutUint32(in[12:16], uint32(r))
}

// DrawRoundBlock is the AES input of round i on half r (for vectors).
func DrawRoundBlock(size uint64, h uint, i int, r uint64) []byte {
	var in [16]byte
	putRoundBlock(&in, size, h, i, r)
	return in[:]
}

// DrawRound is F_i(r) under seed for a permutation of [0, size) (for
// vectors); 0 for a malformed seed.
func DrawRound(seed []byte, size uint64, i int, r uint64) uint64 {
	f, err := newFeistelAES(seed, size)
	if err != nil {
		return 0
	}
	return f.round(i, r)
}

func (f *feistelAES) encrypt(x uint64) uint64 {
	l, r := x>>f.h, x&f.mask
	for i := 0; i < DrawRounds; i++ {
		l, r = r, l^f.round(i, r)
	}
	return l<<f.h | r
}

func (f *feistelAES) decrypt(y uint64) uint64 {
	l, r := y>>f.h, y&f.mask
	for i := DrawRounds - 1; i >= 0; i-- {
		l, r = r^f.round(i, l), l
	}
	return l<<f.h | r
}

// permute maps x in [0, size) to its place in [0, size): the network is
// applied again while the value lies outside (cycle walking).
func (f *feistelAES) permute(x uint64) uint64 {
	if f.size <= 1 {
		return x
	}
	for x = f.encrypt(x); x >= f.size; x = f.encrypt(x) {
	}
	return x
}

func (f *feistelAES) unpermute(y uint64) uint64 {
	if f.size <= 1 {
		return y
	}
	for y = f.decrypt(y); y >= f.size; y = f.decrypt(y) {
	}
	return y
}

// DrawPermute returns π(x), the place in [0, size) of x under seed (the
// specification's function, for verifiers and vectors).
func DrawPermute(seed []byte, size, x uint64) (uint64, error) {
	f, err := newFeistelAES(seed, size)
	if err != nil {
		return 0, err
	}
	if x >= size {
		return 0, errors.New("draw: the value lies outside [0, size)")
	}
	return f.permute(x), nil
}
