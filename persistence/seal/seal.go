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
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// LoadOrCreateKey reads <dataDir>/master.key, creating it with a fresh
// random key (mode 0600, written atomically) when it is missing. A file of
// the wrong size, or one readable by group or others, is refused.
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, "master.key")
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		if fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("%s is readable by group or others (mode %v); chmod 600 it", path, fi.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if len(b) != KeySize {
			return nil, fmt.Errorf("%s holds %d bytes, want %d", path, len(b), KeySize)
		}
		return b, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dataDir, ".master.key.*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreateKey(dataDir) // another process won the race
		}
		return nil, err
	}
	if d, err := os.Open(dataDir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return key, nil
}

// ParseKey reads a master key given as 64 hex characters or base64 (std or
// URL alphabet, padded or not), as nodes of a cluster share it through
// AQ_MASTER_KEY.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("master key must be %d bytes as hex or base64", KeySize)
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
