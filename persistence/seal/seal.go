// Package seal keeps secrets at rest: room signing secrets and ticket keys
// are sealed with AES-256-GCM under the node's master key before they enter
// the log; API keys and bypass codes are stored only as hashes.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
)

// KeySize is the master key's length in bytes.
const KeySize = 32

const version = 1

// ErrOpen is returned when a sealed value cannot be opened: wrong key,
// wrong associated data, or tampered bytes.
var ErrOpen = errors.New("seal: cannot open sealed value")

// Sealer seals and opens secrets under one master key. It is safe for
// concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer for a 32-byte master key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: master key must be %d bytes, not %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plaintext bound to associatedData (e.g. the room and the
// purpose): version byte ‖ 12-byte random nonce ‖ ciphertext and tag.
func (s *Sealer) Seal(plaintext, associatedData []byte) []byte {
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return s.aead.Seal(out, out[1:], plaintext, associatedData)
}

// Open decrypts a value sealed with the same key and associated data.
func (s *Sealer) Open(sealed, associatedData []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n+s.aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	p, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], associatedData)
	if err != nil {
		return nil, ErrOpen
	}
	return p, nil
}

// HashSecret hashes an API key, bypass code or admin token for storage.
// These secrets carry at least 100 random bits, so a fast hash is right: no
// guessing attack is helped by slowness, and lookups stay cheap.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Equal compares two hashes in constant time.
func Equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
