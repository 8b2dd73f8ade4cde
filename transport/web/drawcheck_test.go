package web

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeOrSkip returns node's path; the draw's JavaScript verifier needs it.
func nodeOrSkip(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	return node
}

// The page's verifier, written in JavaScript from docs/draw.md, computes
// every test vector as the Go implementation does: commitment bytes and
// hashes, round-function blocks, permutations and whole draws.
func TestDrawVerifierJSMatchesVectors(t *testing.T) {
	node := nodeOrSkip(t)
	vectors := filepath.Join("..", "..", "actors", "room", "testdata", "draw_vectors.json")
	raw, err := os.ReadFile(vectors)
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Commitments []struct{ KeyHash, Bytes, Hash string }
		Rounds      []struct {
			H     uint
			Block string
			F     uint64
		}
		Permutations []struct{ Image []uint64 }
		Draws        []struct {
			Seed      string
			Positions []uint64
		}
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(t.TempDir(), "drawcheck.mjs")
	src, err := os.ReadFile(filepath.Join("static", "drawcheck.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(module, src, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join("testdata", "drawvectors.mjs"), module, vectors).Output()
	if err != nil {
		t.Fatalf("node drawvectors.mjs: %v", err)
	}
	var got struct {
		Commitments  []struct{ KeyHash, Bytes, Hash string }
		Rounds       []struct{ H, Block, F string }
		Permutations []struct{ Image []string }
		Draws        []struct {
			Seed      string
			Positions []string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Commitments) != len(want.Commitments) || len(got.Rounds) != len(want.Rounds) ||
		len(got.Permutations) != len(want.Permutations) || len(got.Draws) != len(want.Draws) {
		t.Fatalf("JS computed %d/%d/%d/%d vectors", len(got.Commitments), len(got.Rounds), len(got.Permutations), len(got.Draws))
	}
	for i, w := range want.Commitments {
		if g := got.Commitments[i]; g.KeyHash != w.KeyHash || g.Bytes != w.Bytes || g.Hash != w.Hash {
			t.Errorf("commitment %d: JS %+v, Go %+v", i, g, w)
		}
	}
	for i, w := range want.Rounds {
		if g := got.Rounds[i]; g.H != fmt.Sprint(w.H) || g.Block != w.Block || g.F != fmt.Sprint(w.F) {
			t.Errorf("round %d: JS %+v, Go %+v", i, g, w)
		}
	}
	for i, w := range want.Permutations {
		if g := fmt.Sprint(got.Permutations[i].Image); g != fmt.Sprint(w.Image) {
			t.Errorf("permutation %d: JS %s, Go %v", i, g, w.Image)
		}
	}
	for i, w := range want.Draws {
		if g := got.Draws[i]; g.Seed != w.Seed || fmt.Sprint(g.Positions) != fmt.Sprint(w.Positions) {
			t.Errorf("draw %d: JS %+v, Go %+v", i, g, w)
		}
	}
}
