package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/filelog/faultfs"
)

// log verify passes a whole log, names a damaged frame and fails; log
// repair salvages the rest into a new directory, where the stream that
// lost a frame is refused by name and the other serves.
func TestLogVerifyAndRepair(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "log")
	l, err := filelog.OpenOptions(dir, filelog.Options{SegmentSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		for _, s := range []string{"room-a", "room-b"} {
			if _, err := l.Append(ctx, s, bytes.Repeat([]byte{'x'}, 60)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "master.key"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runLog([]string{"verify", "--data-dir", data}, &out); err != nil || !strings.Contains(out.String(), "no damage found") {
		t.Fatalf("verify of a whole log: %v\n%s", err, out.String())
	}

	// room-a's first frame, in the first segment (sealed).
	seg := filepath.Join(dir, "0000000001.seg")
	b, _ := os.ReadFile(seg)
	i := bytes.LastIndex(b, []byte("room-a"))
	if err := faultfs.FlipBit(seg, i+len("room-a")+20, 0x01); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = runLog([]string{"verify", "--data-dir", data}, &out)
	if !errors.Is(err, errDamaged) || !strings.Contains(out.String(), "DAMAGED "+seg) ||
		!strings.Contains(out.String(), `frame checksum mismatch) (the damaged frame names stream "room-a"`) {
		t.Fatalf("verify of a damaged log: %v\n%s", err, out.String())
	}
	if _, err := filelog.Open(dir); err == nil {
		t.Fatal("the damaged log opens")
	}

	checkRepair(t, data)
	for _, args := range [][]string{{"repair", "--data-dir", data}, {"verify", "--data-dir", t.TempDir()}} {
		if err := runLog(args, &out); err == nil {
			t.Errorf("log %v: no error", args)
		}
	}
}

// checkRepair runs log repair on data's damaged log: room-a, which lost its
// first frame, is refused in the new log, room-b serves.
func checkRepair(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	var out bytes.Buffer
	to := filepath.Join(t.TempDir(), "new")
	if err := runLog([]string{"repair", "--data-dir", data, "--out", to}, &out); err != nil {
		t.Fatalf("repair: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "left behind") || !strings.Contains(out.String(), `stream "room-a"`) {
		t.Fatalf("repair output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(to, "master.key")); err != nil {
		t.Fatalf("the master key is not beside the repaired log: %v", err)
	}
	l, err := filelog.Open(filepath.Join(to, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Replay(ctx, "room-a", -1, func(persistence.Record) error { return nil }); !errors.Is(err, persistence.ErrDamaged) {
		t.Fatalf("room-a after repair: %v, want ErrDamaged", err)
	}
	n := 0
	if _, err := l.Replay(ctx, "room-b", -1, func(persistence.Record) error { n++; return nil }); err != nil || n != 6 {
		t.Fatalf("room-b after repair: %d records, %v", n, err)
	}
}
