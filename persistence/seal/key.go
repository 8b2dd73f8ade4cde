package seal

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvKey is the environment variable through which the nodes of a cluster
// share one master key (ParseKey reads its value). A single node keeps its
// key in its data directory instead (LoadOrCreateKey).
const EnvKey = "AQ_MASTER_KEY"

// KeyFile is the name of the master key file in the data directory.
const KeyFile = "master.key"

// LoadOrCreateKey returns the master key kept in dataDir/master.key: exactly
// KeySize raw bytes, readable by its owner only. When the file is missing it
// is created with a new random key, atomically (a crash leaves no partial
// key, and of two processes racing both end up with the same key). It
// refuses a file of the wrong size, and one that its group or others may
// read or write, rather than use a key that may have leaked.
//
// Losing the key makes every sealed secret unreadable: back it up with the
// data directory, but apart from it.
func LoadOrCreateKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create master key: %w", err)
	}
	if err := createKey(dataDir, path); err != nil {
		return nil, err
	}
	return readKey(path)
}

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read master key: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read master key: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read master key: %s is not a regular file", path)
	}
	// Windows has no such mode bits; its ACLs are the operator's to set.
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("read master key: %s has mode %04o, open to group or others: restrict it to its owner (chmod 600) after checking it has not leaked", path, perm)
	}
	if st.Size() != KeySize {
		return nil, fmt.Errorf("read master key: %s holds %d bytes, want %d: not a master key, or damaged", path, st.Size(), KeySize)
	}
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("read master key: %w", err)
	}
	return key, nil
}

// createKey writes a new key to a temporary file, fsyncs it and links it
// into place, which fails if another process got there first; then fsyncs
// the directory.
func createKey(dir, path string) error {
	key := make([]byte, KeySize)
	rand.Read(key)
	tmp, err := os.CreateTemp(dir, ".master.key-*") // mode 0600
	if err != nil {
		return fmt.Errorf("create master key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return fmt.Errorf("create master key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("create master key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("create master key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create master key: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("create master key: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" {
		return fmt.Errorf("create master key: sync %s: %w", dir, err)
	}
	return nil
}

// ParseKey decodes a master key given as text (the value of AQ_MASTER_KEY):
// 64 hexadecimal digits, or base64 (standard or URL alphabet, padded or
// not) of 32 bytes. Surrounding white space is ignored. The error never
// repeats the text.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil && len(key) == KeySize {
			return key, nil
		}
	}
	return nil, fmt.Errorf("parse master key: want %d bytes as 64 hex digits or base64, got %d characters that are neither", KeySize, len(s))
}
