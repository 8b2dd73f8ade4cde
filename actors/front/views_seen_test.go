package front

import "testing"

// A flood of presence reports for one room fills at most one bounded sync
// message; the rest is counted, not kept, and repeats cost nothing.
func TestViewsSeenIsBoundedPerSync(t *testing.T) {
	v := &Views{seen: map[string]map[uint64]struct{}{}}
	const extra = 1000
	for n := uint64(1); n <= maxSeenPerSync+extra; n++ {
		v.Seen("r", n)
	}
	for n := uint64(1); n <= 10; n++ {
		v.Seen("r", n) // already reported: neither kept twice nor dropped
	}
	v.Seen("other", 1)
	if got := len(v.seen["r"]); got != maxSeenPerSync {
		t.Fatalf("room r keeps %d numbers, want %d", got, maxSeenPerSync)
	}
	if got := v.SeenDropped(); got != extra {
		t.Fatalf("dropped %d reports, want %d", got, extra)
	}
	if got := len(v.seen["other"]); got != 1 {
		t.Fatalf("another room's report was refused: %d kept", got)
	}
}
