package seal

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal([]byte("the secret"), []byte("room:r1:secret"))
	if bytes.Contains(sealed, []byte("the secret")) {
		t.Fatal("plaintext visible in the sealed value")
	}
	got, err := s.Open(sealed, []byte("room:r1:secret"))
	if err != nil || string(got) != "the secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if bytes.Equal(sealed, s.Seal([]byte("the secret"), []byte("room:r1:secret"))) {
		t.Fatal("two seals of one value are equal: nonce not random")
	}
	other, _ := NewSealer(bytes.Repeat([]byte{8}, KeySize))
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	for _, tc := range []struct {
		name   string
		s      *Sealer
		sealed []byte
		ad     string
	}{
		{"wrong associated data", s, sealed, "room:r2:secret"},
		{"wrong key", other, sealed, "room:r1:secret"},
		{"tampered", s, tampered, "room:r1:secret"},
		{"truncated", s, sealed[:10], "room:r1:secret"},
		{"empty", s, nil, "room:r1:secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.s.Open(tc.sealed, []byte(tc.ad)); err == nil {
				t.Fatal("opened, want refused")
			}
		})
	}
	if _, err := NewSealer([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil || len(k1) != KeySize {
		t.Fatalf("create: %v", err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "master.key"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("reload gave another key: %v", err)
	}
	os.Chmod(filepath.Join(dir, "master.key"), 0o644)
	if _, err := LoadOrCreateKey(dir); err == nil {
		t.Fatal("world-readable key file accepted")
	}
	os.Chmod(filepath.Join(dir, "master.key"), 0o600)
	os.WriteFile(filepath.Join(dir, "master.key"), []byte("short"), 0o600)
	if _, err := LoadOrCreateKey(dir); err == nil {
		t.Fatal("short key file accepted")
	}
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xab}, KeySize)
	for _, s := range []string{hex.EncodeToString(key), "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"} {
		got, err := ParseKey(s)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q): %x %v", s, got, err)
		}
	}
	for _, s := range []string{"", "abc", hex.EncodeToString(key[:16])} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
	if !Equal(HashSecret("a"), HashSecret("a")) || Equal(HashSecret("a"), HashSecret("b")) {
		t.Fatal("HashSecret/Equal")
	}
}
