package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

func mustNew(t *testing.T, key []byte) *Sealer {
	t.Helper()
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	s := mustNew(t, newKey(t))
	for _, tc := range []struct {
		name      string
		plaintext []byte
		ad        []byte
	}{
		{"SigningSecret", []byte("0123456789abcdef0123456789abcdef"), []byte("room:r1:secret")},
		{"Empty", []byte{}, []byte("room:r1:x")},
		{"NoAssociatedData", []byte("secret"), nil},
		{"Large", bytes.Repeat([]byte{7}, 1<<16), []byte("a")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sealed := s.Seal(tc.plaintext, tc.ad)
			if len(sealed) != len(tc.plaintext)+Overhead {
				t.Fatalf("got %d sealed bytes, want %d", len(sealed), len(tc.plaintext)+Overhead)
			}
			if len(tc.plaintext) >= 8 && bytes.Contains(sealed, tc.plaintext) {
				t.Fatal("plaintext stands in the sealed bytes")
			}
			got, err := s.Open(sealed, tc.ad)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.plaintext) {
				t.Fatalf("got %x, want %x", got, tc.plaintext)
			}
		})
	}
}

func TestSealIsRandomised(t *testing.T) {
	s := mustNew(t, newKey(t))
	a, b := s.Seal([]byte("same"), []byte("ad")), s.Seal([]byte("same"), []byte("ad"))
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one plaintext are equal: nonce reused")
	}
	if a[0] != version1 {
		t.Fatalf("got version byte %d, want %d", a[0], version1)
	}
}

func TestOpenFails(t *testing.T) {
	key := newKey(t)
	s := mustNew(t, key)
	ad := []byte("room:r1:secret")
	sealed := s.Seal([]byte("the secret"), ad)
	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	other := newKey(t)
	for _, tc := range []struct {
		name   string
		sealer *Sealer
		sealed []byte
		ad     []byte
	}{
		{"WrongRoom", s, sealed, []byte("room:r2:secret")},
		{"WrongPurpose", s, sealed, []byte("room:r1:ticket")},
		{"NoAssociatedData", s, sealed, nil},
		{"WrongKey", mustNew(t, other), sealed, ad},
		{"VersionChanged", s, flip(0), ad},
		{"NonceTampered", s, flip(3), ad},
		{"CiphertextTampered", s, flip(1 + 12 + 2), ad},
		{"TagTampered", s, flip(len(sealed) - 1), ad},
		{"Truncated", s, sealed[:len(sealed)-1], ad},
		{"TooShort", s, sealed[:Overhead-1], ad},
		{"Empty", s, nil, ad},
		{"Extended", s, append(bytes.Clone(sealed), 0), ad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sealer.Open(tc.sealed, tc.ad)
			if !errors.Is(err, ErrOpen) || got != nil {
				t.Fatalf("got %q, %v; want nothing and ErrOpen", got, err)
			}
		})
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer accepted a %d-byte key", n)
		}
	}
}

func TestHashSecretAndEqual(t *testing.T) {
	h := HashSecret("aq_live_2Qd7bV9xR3kLmN8pT4wY6zH1")
	if len(h) != 32 {
		t.Fatalf("got %d bytes, want 32", len(h))
	}
	// SHA-256 of "abc", from FIPS 180-2.
	if got := hex.EncodeToString(HashSecret("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("got %s, want the SHA-256 of abc", got)
	}
	for _, tc := range []struct {
		name string
		a, b []byte
		want bool
	}{
		{"Same", h, HashSecret("aq_live_2Qd7bV9xR3kLmN8pT4wY6zH1"), true},
		{"Other", h, HashSecret("aq_live_2Qd7bV9xR3kLmN8pT4wY6zH2"), false},
		{"Prefix", h, h[:31], false},
		{"Empty", h, nil, false},
		{"BothEmpty", nil, []byte{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Equal(tc.a, tc.b); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	key := newKey(t)
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"Hex", hex.EncodeToString(key), true},
		{"HexUpper", strings.ToUpper(hex.EncodeToString(key)), true},
		{"HexWithNewline", hex.EncodeToString(key) + "\n", true},
		{"Base64", base64.StdEncoding.EncodeToString(key), true},
		{"Base64Raw", base64.RawStdEncoding.EncodeToString(key), true},
		{"Base64URL", base64.URLEncoding.EncodeToString(key), true},
		{"Base64RawURL", base64.RawURLEncoding.EncodeToString(key), true},
		{"Empty", "", false},
		{"ShortHex", hex.EncodeToString(key[:16]), false},
		{"LongBase64", base64.StdEncoding.EncodeToString(append(key, 1)), false},
		{"NotHex", strings.Repeat("g", 64), false},
		{"Passphrase", "correct horse battery staple", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseKey(tc.in)
			if !tc.ok {
				if err == nil {
					t.Fatalf("accepted %q", tc.in)
				}
				if tc.in != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.in)) {
					t.Fatalf("error repeats the key: %v", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, key) {
				t.Fatalf("got %x %v, want %x", got, err, key)
			}
		})
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	key, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != KeySize || bytes.Equal(key, make([]byte, KeySize)) {
		t.Fatalf("got key %x, want %d random bytes", key, KeySize)
	}
	path := filepath.Join(dir, KeyFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %04o, want 0600", st.Mode().Perm())
	}
	again, err := LoadOrCreateKey(dir)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("second load: %x %v, want the same key", again, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data directory holds %d files, want only %s", len(entries), KeyFile)
	}
	// A sealed secret survives a restart with the loaded key.
	sealed := mustNew(t, key).Seal([]byte("s"), []byte("ad"))
	if _, err := mustNew(t, again).Open(sealed, []byte("ad")); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOrCreateKeyRaceGivesOneKey(t *testing.T) {
	dir := t.TempDir()
	keys := make([][]byte, 16)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadOrCreateKey(dir)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for i, k := range keys {
		if !bytes.Equal(k, keys[0]) {
			t.Fatalf("caller %d got another key", i)
		}
	}
}

func TestLoadOrCreateKeyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content []byte
		mode    os.FileMode
		want    string
		unixish bool
	}{
		{"GroupReadable", make([]byte, KeySize), 0o640, "mode 0640", true},
		{"WorldReadable", make([]byte, KeySize), 0o604, "mode 0604", true},
		{"GroupWritable", make([]byte, KeySize), 0o620, "mode 0620", true},
		{"Short", make([]byte, KeySize-1), 0o600, "31 bytes", false},
		{"Long", make([]byte, KeySize+1), 0o600, "33 bytes", false},
		{"HexText", []byte(strings.Repeat("ab", KeySize)), 0o600, "64 bytes", false},
		{"Empty", nil, 0o600, "0 bytes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unixish && runtime.GOOS == "windows" {
				t.Skip("no mode bits")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, KeyFile)
			if err := os.WriteFile(path, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			key, err := LoadOrCreateKey(dir)
			if err == nil {
				t.Fatalf("got key %x, want a refusal", key)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want it to say %q", err, tc.want)
			}
			// The bad file is left for the operator to inspect, not replaced.
			if b, _ := os.ReadFile(path); !bytes.Equal(b, tc.content) {
				t.Fatal("key file was changed")
			}
		})
	}
	t.Run("Directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, KeyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOrCreateKey(dir); err == nil {
			t.Fatal("a directory was taken for the key")
		}
	})
}

func BenchmarkSeal(b *testing.B) {
	s, _ := NewSealer(make([]byte, KeySize))
	pt, ad := make([]byte, 32), []byte("room:r1:secret")
	b.ReportAllocs()
	for b.Loop() {
		s.Seal(pt, ad)
	}
}
