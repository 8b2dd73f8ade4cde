package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's table of bounds names, for each structure keyed by what an
// outsider sends, the test that holds the bound: every row names at least
// one, and every test named exists.
func TestBoundsTableNamesRealTests(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| structure | key | bound | beyond it | counted in | test |")
	if !ok {
		t.Fatal("README.md has no table of bounds")
	}
	var sources strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		sources.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	testName := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`")
	rows := 0
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows++
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		names := testName.FindAllStringSubmatch(cells[len(cells)-1], -1)
		if len(names) == 0 {
			t.Errorf("row %q names no test", cells[0])
		}
		for _, n := range names {
			if !strings.Contains(sources.String(), "func "+n[1]+"(") {
				t.Errorf("row %q names %s, which no test file has", cells[0], n[1])
			}
		}
	}
	if rows < 15 {
		t.Fatalf("the table of bounds has %d rows", rows)
	}
}
