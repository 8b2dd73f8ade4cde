package filelog

import (
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// Garbage over many frames of a sealed segment is one bad region: Verify
// finds the whole frames after it, in good time, and names the streams
// that lose records; a garbled stream name is not offered as a guess.
func TestVerifyGarbage(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, 1<<20)
	for i := 0; i < 4000; i++ {
		appendRecords(t, l, []string{"a", "b"}[i%2], i/2, i/2+1)
	}
	appendRecords(t, l, "c", 0, 1)
	mustClose(t, l)
	// A second segment, so that the first is sealed.
	l = mustOpen(t, dir, 1)
	appendRecords(t, l, "c", 1, 2)
	mustClose(t, l)

	path := segmentPath(dir, 1)
	b, _ := os.ReadFile(path)
	garbage := make([]byte, 32<<10)
	rand.New(rand.NewSource(1)).Read(garbage)
	copy(b[20<<10:], garbage)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, f := range v.Findings {
		text = append(text, f.Where+": "+f.What)
	}
	all := strings.Join(text, "\n")
	t.Logf("%v, %d frames:\n%s", time.Since(start), v.Frames, all)
	if !v.Damaged() || len(v.Findings) != 3 || v.Frames < 3000 ||
		!strings.Contains(all, `stream "a": cannot be recovered`) || !strings.Contains(all, `stream "b": cannot be recovered`) ||
		!strings.Contains(all, "hold no whole frame") || strings.Contains(all, "unproven") {
		t.Fatalf("want one bad region and streams a and b named, the rest whole")
	}
}

// A snapshot file's name says its stream, unless hashed.
func TestStreamOfFile(t *testing.T) {
	for _, s := range []string{"room-a", "Room_A", "a/b", strings.Repeat("long-", 60)} {
		for gen, file := range []string{snapshotFile(s), prevPrefix + snapshotFile(s)} {
			got, g, ok := streamOfFile(file)
			hashed := strings.HasPrefix(strings.TrimPrefix(file, prevPrefix), "h-")
			if ok == hashed || ok && (got != s || g != gen) {
				t.Errorf("%s: got %q %d %v", file, got, g, ok)
			}
		}
	}
}
