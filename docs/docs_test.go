// Package docs holds the project's documents; its test keeps the code's
// references to them resolving.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// outside names documents that are not in the repository: a comment
	// citing one sends a reader nowhere.
	outside = regexp.MustCompile(`\b(DESIGN|CONTRACT|DEPENDENCIES|STYLE)\.md\b`)
	// cite is a comment's reference to a section or an invariant of the
	// architecture document, as in (docs/architecture.md, "A join") or
	// (docs/architecture.md, invariant 3).
	cite = regexp.MustCompile(`docs/architecture\.md,\s*(?:(?://|#)\s*)?(?:"([^"]+)"|invariant\s+(\d+))`)
)

// TestReferencesResolve reads every source file of the repository and
// checks that each section or invariant of docs/architecture.md it cites
// exists, and that nothing cites a document outside the repository.
func TestReferencesResolve(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	invariants := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[h] = true
		}
		if m := regexp.MustCompile(`^(\d+)\. \*\*`).FindStringSubmatch(line); m != nil {
			invariants[m[1]] = true
		}
	}
	if len(invariants) < 9 {
		t.Fatalf("architecture.md lists %d invariants, want 9", len(invariants))
	}
	cited := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "vendor", "testdata", "artifacts":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".js", ".mjs", ".sh", ".html", ".md", ".hcl", ".conf":
		default:
			return nil
		}
		if strings.HasSuffix(path, "docs_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := outside.Find(b); m != nil {
			t.Errorf("%s cites %s, which is not in the repository", path, m)
		}
		for _, m := range cite.FindAllSubmatch(b, -1) {
			cited++
			if s := string(m[1]); s != "" && !headings[s] {
				t.Errorf("%s cites section %q of docs/architecture.md, which has no such heading", path, s)
			}
			if n := string(m[2]); n != "" && !invariants[n] {
				t.Errorf("%s cites invariant %s of docs/architecture.md, which lists no such invariant", path, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 10 {
		t.Errorf("found %d citations of docs/architecture.md, want the code's 10 or more", cited)
	}
}
