package drawcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/drawcheck"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The whole draw printed in docs/draw.md, section 8, checks offline as
// printed: commitment, chain, round, timing, BLS signature, seed; and the
// positions printed after it are the draw's.
func TestDocumentedDrawVerifies(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "draw.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "**A whole draw with a real beacon round**")
	if !ok {
		t.Fatal("docs/draw.md has no whole draw with a real beacon round")
	}
	blocks := strings.Split(rest, "```")
	if len(blocks) < 4 || !strings.HasPrefix(blocks[1], "json\n") {
		t.Fatal("the whole draw is not followed by a json block and a block of positions")
	}
	var rev room.Reveal
	if err := json.Unmarshal([]byte(strings.TrimPrefix(blocks[1], "json\n")), &rev); err != nil {
		t.Fatalf("the printed reveal: %v", err)
	}
	rep, d := drawcheck.Check(&rev, nil)
	if !rep.OK() || d == nil {
		t.Fatalf("the printed reveal does not verify: %+v", rep.Steps)
	}
	for _, s := range rep.Steps {
		if s.Note {
			t.Errorf("the printed reveal checks with a note: %s: %s", s.Name, s.Detail)
		}
	}
	fields := strings.Fields(blocks[3])
	if uint64(len(fields)) != rev.Size {
		t.Fatalf("%d positions printed for %d numbers", len(fields), rev.Size)
	}
	for i, f := range fields {
		want, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := d.Position(rev.From + 1 + uint64(i)); err != nil || got != want {
			t.Errorf("number %d: printed position %d, recomputed %d %v", rev.From+1+uint64(i), want, got, err)
		}
	}
}
