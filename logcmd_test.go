package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

func TestLogInspect(t *testing.T) {
	dir := t.TempDir()
	l, err := filelog.Open(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	offs, err := l.Append(ctx, "room-a", []byte("one"), []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SaveSnapshot(ctx, "room-a", persistence.Snapshot{Offset: offs[0], Data: []byte("s")}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "directory", []byte("x")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runLog([]string{"inspect", "--data-dir", dir, "--log-retention", "36h"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 segments", "2 streams", "retention 36h0m0s", "room-a", "directory", "none", "0000000001"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
	for _, args := range [][]string{nil, {"list"}, {"inspect", "--log-retention", "soon"}, {"inspect", "--data-dir", t.TempDir()}} {
		if err := runLog(args, &out); err == nil {
			t.Errorf("log %v: no error", args)
		}
	}
}
