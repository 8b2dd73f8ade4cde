// Package beacon reads and checks rounds of a drand randomness beacon: the
// chain's description, its hash, and each round's BLS12-381 signature, on
// cloudflare/circl (drand's own modules are not used).
package beacon

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/ecc/bls12381"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// drand's scheme ids this package verifies.
const (
	// SchemeChained is drand's "default" network: public key on G1,
	// signatures on G2 over SHA-256(previous signature ‖ round).
	SchemeChained = "pedersen-bls-chained"
	// SchemeUnchained signs SHA-256(round) on G2, public key on G1.
	SchemeUnchained = "pedersen-bls-unchained"
	// SchemeG1 is "quicknet": signatures on G1 over SHA-256(round),
	// public key on G2, hashed to G1 with the RFC 9380 G1 tag.
	SchemeG1 = "bls-unchained-g1-rfc9380"
)

// Domain separation tags of hashing to the curve (RFC 9380 suites, as
// drand uses them).
var (
	dstG1 = []byte("BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_")
	dstG2 = []byte("BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_")
)

// Errors of verification.
var (
	ErrScheme    = errors.New("beacon: unsupported scheme")
	ErrSignature = errors.New("beacon: the round's signature does not verify")
	ErrChainHash = errors.New("beacon: the chain's description does not match its hash")
)

// ChainHash is drand's hash of a chain: SHA-256 of the period (4 bytes),
// the genesis time (8 bytes), the public key, the genesis seed and, for a
// beacon other than "default", its id.
func ChainHash(c *room.Chain) []byte {
	h := sha256.New()
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(c.PeriodSeconds))
	binary.BigEndian.PutUint64(b[4:], uint64(c.GenesisTime))
	h.Write(b[:])
	h.Write(c.PublicKey)
	h.Write(c.GenesisSeed)
	if c.BeaconID != "" && c.BeaconID != "default" {
		h.Write([]byte(c.BeaconID))
	}
	return h.Sum(nil)
}

// CheckChain reports whether c's hash is the hash of its description.
func CheckChain(c *room.Chain) error {
	if !bytes.Equal(ChainHash(c), c.Hash) {
		return ErrChainHash
	}
	return nil
}

// Message is the 32-byte digest a round's signature signs.
func Message(scheme string, r *room.BeaconRound) []byte {
	h := sha256.New()
	if scheme == SchemeChained {
		h.Write(r.PreviousSignature)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], r.Round)
	h.Write(b[:])
	return h.Sum(nil)
}

// Verify checks r's signature under chain c's public key and that its
// randomness is SHA-256 of the signature.
func Verify(c *room.Chain, r *room.BeaconRound) error {
	sum := sha256.Sum256(r.Signature)
	if !bytes.Equal(sum[:], r.Randomness) {
		return fmt.Errorf("beacon: round %d: the randomness is not SHA-256 of the signature", r.Round)
	}
	msg := Message(c.Scheme, r)
	var ok bool
	var err error
	switch c.Scheme {
	case SchemeChained, SchemeUnchained:
		ok, err = verifyKeyG1(c.PublicKey, r.Signature, msg)
	case SchemeG1:
		ok, err = verifyKeyG2(c.PublicKey, r.Signature, msg)
	default:
		return fmt.Errorf("%w %q", ErrScheme, c.Scheme)
	}
	if err != nil {
		return fmt.Errorf("beacon: round %d: %w", r.Round, err)
	}
	if !ok {
		return fmt.Errorf("%w (round %d)", ErrSignature, r.Round)
	}
	return nil
}

// verifyKeyG1 checks e(g1, sig) = e(pk, H(msg)) with sig, H(msg) on G2.
func verifyKeyG1(pkb, sigb, msg []byte) (bool, error) {
	var pk bls12381.G1
	var sig, h bls12381.G2
	if err := pk.SetBytes(pkb); err != nil || !pk.IsOnG1() || pk.IsIdentity() {
		return false, errors.New("the public key is not a point of G1")
	}
	if err := sig.SetBytes(sigb); err != nil || !sig.IsOnG2() {
		return false, errors.New("the signature is not a point of G2")
	}
	h.Hash(msg, dstG2)
	e := bls12381.ProdPairFrac([]*bls12381.G1{bls12381.G1Generator(), &pk}, []*bls12381.G2{&sig, &h}, []int{1, -1})
	return e.IsIdentity(), nil
}

// verifyKeyG2 checks e(sig, g2) = e(H(msg), pk) with sig, H(msg) on G1.
func verifyKeyG2(pkb, sigb, msg []byte) (bool, error) {
	var pk bls12381.G2
	var sig, h bls12381.G1
	if err := pk.SetBytes(pkb); err != nil || !pk.IsOnG2() || pk.IsIdentity() {
		return false, errors.New("the public key is not a point of G2")
	}
	if err := sig.SetBytes(sigb); err != nil || !sig.IsOnG1() {
		return false, errors.New("the signature is not a point of G1")
	}
	h.Hash(msg, dstG1)
	e := bls12381.ProdPairFrac([]*bls12381.G1{&sig, &h}, []*bls12381.G2{bls12381.G2Generator(), &pk}, []int{1, -1})
	return e.IsIdentity(), nil
}
