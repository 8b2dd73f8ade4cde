package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

func TestOpenSealer(t *testing.T) {
	dir := t.TempDir()
	// Without --master-key the key file is created once and reused.
	a, err := openSealer(&serveConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, seal.KeyFile)); err != nil {
		t.Fatalf("key file: %v", err)
	}
	b, err := openSealer(&serveConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Open(a.Seal([]byte("secret"), nil), nil); err != nil || string(got) != "secret" {
		t.Fatalf("a second start opens %q, %v", got, err)
	}

	// --master-key wins over the file.
	raw, err := os.ReadFile(filepath.Join(dir, seal.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("ab", seal.KeySize)
	if other == hex.EncodeToString(raw) {
		t.Skip("the random key happens to be the test key")
	}
	c, err := openSealer(&serveConfig{DataDir: dir, MasterKey: other})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(a.Seal([]byte("secret"), nil), nil); err == nil {
		t.Fatal("--master-key did not replace the key file")
	}

	// A bad key is one line naming the master key, without the key.
	_, err = openSealer(&serveConfig{DataDir: dir, MasterKey: "not-a-key"})
	if err == nil || !strings.HasPrefix(err.Error(), "master key: ") || strings.Contains(err.Error(), "not-a-key") {
		t.Fatalf("bad key: %v", err)
	}
}
