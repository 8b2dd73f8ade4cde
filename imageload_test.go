package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

func writeImage(t *testing.T, path string, lines []imageLine) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

type epochOf struct {
	Type  string `json:"type"`
	Epoch int64  `json:"epoch"`
}

// An image loads into a log with offsets of its own: every epoch follows
// its marker to the new offset, an epoch whose marker retention dropped
// becomes one negative value in records and snapshot alike, snapshots
// cover the new offsets of what they covered, and a log that holds a
// stream of the image is refused.
func TestLoadImageRewritesEpochs(t *testing.T) {
	dir := t.TempDir()
	writeImage(t, filepath.Join(dir, imageSnapshots), []imageLine{
		{Stream: "s1", Offset: 101, Data: []byte(`{"epoch":100,"n":1}`)},
		{Stream: "s2", Offset: 55, Data: []byte(`{"epoch":50}`)},
	})
	writeImage(t, filepath.Join(dir, imageEvents), []imageLine{
		{Stream: "s2", Offset: 60, Data: []byte(`{"v":1,"type":"x","epoch":50}`)},
		{Stream: "s1", Offset: 100, Data: []byte(`{"v":1,"type":"activated"}`)},
		{Stream: "s1", Offset: 101, Data: []byte(`{"v":1,"type":"x","epoch":100}`)},
		{Stream: "s1", Offset: 102, Data: []byte(`{"v":1,"type":"activated"}`)},
		{Stream: "s1", Offset: 103, Data: []byte(`{"v":1,"type":"x","epoch":102}`)},
		{Stream: "s2", Offset: 61, Data: []byte(`{"v":1,"type":"x","epoch":50}`)},
	})
	ctx := context.Background()
	l := memlog.New()
	// Offsets of the target differ from the image's.
	if _, err := l.Append(ctx, "other", []byte(`{}`), []byte(`{}`), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	streams, err := loadImage(ctx, dir, l)
	if err != nil || len(streams) != 2 {
		t.Fatalf("load: %v %v", streams, err)
	}
	recs := map[string][]persistence.Record{}
	for _, s := range []string{"s1", "s2"} {
		if _, err := l.Replay(ctx, s, -1, func(r persistence.Record) error {
			recs[s] = append(recs[s], r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	ep := func(b []byte) epochOf {
		var e epochOf
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	s1 := recs["s1"]
	if len(s1) != 4 || ep(s1[1].Data).Epoch != s1[0].Offset || ep(s1[3].Data).Epoch != s1[2].Offset || s1[0].Offset == 100 {
		t.Fatalf("stream s1 after loading: %+v", s1)
	}
	snap, ok, err := l.LoadSnapshot(ctx, "s1")
	if err != nil || !ok || snap.Offset != s1[1].Offset || ep(snap.Data).Epoch != s1[0].Offset {
		t.Fatalf("snapshot of s1: %+v %s %v", snap, snap.Data, err)
	}
	s2 := recs["s2"]
	snap2, _, _ := l.LoadSnapshot(ctx, "s2")
	if len(s2) != 2 || ep(s2[0].Data).Epoch >= 0 || ep(s2[1].Data).Epoch != ep(s2[0].Data).Epoch ||
		ep(snap2.Data).Epoch != ep(s2[0].Data).Epoch || snap2.Offset != -1 {
		t.Fatalf("stream s2, whose marker was gone: %+v, snapshot %+v %s", s2, snap2, snap2.Data)
	}
	if _, err := loadImage(ctx, dir, l); err == nil || !strings.Contains(err.Error(), "empty log") {
		t.Fatalf("loading into a log that holds the streams: %v", err)
	}
}
