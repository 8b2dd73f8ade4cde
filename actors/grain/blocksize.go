package grain

import "time"

// Block sizing (docs/architecture.md, "Durability and fencing": numbers
// are handed out only from blocks the log has acknowledged).
//
// A block holds about a second of the room's current joins: large enough
// that the log sees a few reservations a second however fast the room
// fills, small enough that a fail-over skips few numbers. The rate is an
// average taken once a second, which is too slow for the first second of
// an on-sale: a room that goes from nothing to thousands of joins a second
// would reserve a block of minBlock at a time, and every batch would wait
// for a log round trip. So a block that lasted less than fastBlock doubles
// the next one, and a sudden rush reaches its size in a handful of
// reservations (16 to 4,096 in eight) instead of a second of waiting.

const (
	minBlock = 16
	maxBlock = 100_000
	// fastBlock: a block reserved this soon after the last one was too
	// small for the room's pace.
	fastBlock = 250 * time.Millisecond
)

// blockSizer decides how many numbers the next reservation holds. It is
// used only from the grain's Receive.
type blockSizer struct {
	// joins counts the numbers issued since window began; rate is the
	// exponentially weighted joins per second.
	joins  uint64
	rate   float64
	window time.Time
	// last is the size of the last reservation, made at lastAt.
	last   uint64
	lastAt time.Time
}

// issued counts n numbers handed out.
func (b *blockSizer) issued(n uint64) { b.joins += n }

// tick folds the joins of the past second into the rate once a second has
// passed since the window began.
func (b *blockSizer) tick(now time.Time) {
	if now.Sub(b.window) < time.Second {
		return
	}
	b.rate = 0.5*b.rate + 0.5*float64(b.joins)/now.Sub(b.window).Seconds()
	b.joins, b.window = 0, now
}

// size is the next block's size at now, at least pending (the numbers
// batches are waiting for).
func (b *blockSizer) size(now time.Time, pending uint64) uint64 {
	n := uint64(b.rate)
	if b.last > 0 && now.Sub(b.lastAt) < fastBlock {
		n = max(n, 2*b.last)
	}
	return max(min(max(n, minBlock), maxBlock), pending)
}

// low reports how few numbers may be left in the reserved block before the
// next reservation is started: half a block, so that it is usually written
// before the current one runs out.
func (b *blockSizer) low() uint64 {
	return max(b.last, uint64(b.rate), minBlock) / 2
}

// reserved records a reservation of n numbers made at now.
func (b *blockSizer) reserved(n uint64, now time.Time) { b.last, b.lastAt = n, now }
