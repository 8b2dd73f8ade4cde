package grain

import (
	"testing"
	"time"
)

func TestBlockSizerDoublesWhileBlocksRunOutFast(t *testing.T) {
	var b blockSizer
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	b.window = t0
	now := t0
	var sizes []uint64
	// A rush: every block runs out 10 ms after it was reserved.
	for range 10 {
		n := b.size(now, 0)
		b.reserved(n, now)
		b.issued(n)
		sizes = append(sizes, n)
		now = now.Add(10 * time.Millisecond)
	}
	want := []uint64{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("block sizes in a rush: got %v, want %v", sizes, want)
		}
	}
	if got := b.low(); got != 4096 {
		t.Errorf("low water after a block of 8192: got %d, want 4096", got)
	}
}

func TestBlockSizerFollowsTheRateWhenBlocksLast(t *testing.T) {
	var b blockSizer
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	b.window = t0
	b.reserved(8192, t0)
	// 3,000 joins a second for three seconds; the last block lasts.
	now := t0
	for range 3 {
		b.issued(3000)
		now = now.Add(time.Second)
		b.tick(now)
	}
	// The rate after three seconds: 1500, 2250, 2625.
	if got := b.size(now, 0); got != 2625 {
		t.Errorf("size once the last block lasted: got %d, want 2625 (the rate)", got)
	}
	if got := b.size(now, 5000); got != 5000 {
		t.Errorf("size with 5000 numbers waiting: got %d, want 5000", got)
	}
}

func TestBlockSizerBounds(t *testing.T) {
	var b blockSizer
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	if got := b.size(now, 0); got != minBlock {
		t.Errorf("size of a quiet room's first block: got %d, want %d", got, minBlock)
	}
	if got := b.low(); got != minBlock/2 {
		t.Errorf("low water of a quiet room: got %d, want %d", got, minBlock/2)
	}
	b.reserved(maxBlock, now)
	if got := b.size(now.Add(time.Millisecond), 0); got != maxBlock {
		t.Errorf("size after a block of the maximum run out at once: got %d, want %d", got, maxBlock)
	}
	// A quiet second later, the block shrinks back to the rate's.
	if got := b.size(now.Add(time.Second), 0); got != minBlock {
		t.Errorf("size a quiet second after: got %d, want %d", got, minBlock)
	}
}
