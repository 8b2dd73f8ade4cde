// Package histogram records latencies in log-scaled buckets with a bounded
// relative error, in the manner of HdrHistogram, so that percentiles of
// millions of samples cost a fixed few kilobytes.
//
// Values below 256 ns are kept exactly. Above that, every power of two is
// split into 128 buckets of equal width, so a bucket's width is at most 1/128
// of its lower bound; a value is reported as the middle of its bucket, which
// puts every reported percentile within 1/256 (about 0.4 %) of a sample that
// really has that rank.
package histogram

import (
	"math"
	"math/bits"
	"time"
)

const (
	// exactBelow values are counted one bucket per nanosecond.
	exactBelow = 256
	// subBits is log2 of the buckets per power of two above exactBelow.
	subBits  = 7
	subCount = 1 << subBits
	// maxShift covers every positive int64.
	maxShift    = 63 - subBits - 1
	bucketCount = exactBelow + maxShift*subCount
)

// MaxRelativeError is the bound on |reported − true| / true for any
// percentile the histogram reports.
const MaxRelativeError = 1.0 / (2 * subCount)

// Histogram counts durations. The zero value is not usable; call New.
// A Histogram is not safe for concurrent use: its owner serialises access.
type Histogram struct {
	counts []uint64
	total  uint64
	min    time.Duration
	max    time.Duration
	sum    float64
}

// New returns an empty histogram.
func New() *Histogram {
	return &Histogram{counts: make([]uint64, bucketCount), min: math.MaxInt64}
}

// index returns the bucket of a non-negative value.
func index(v int64) int {
	if v < exactBelow {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBits - 1 // v>>shift is in [128, 255]
	return exactBelow + (shift-1)*subCount + int(v>>shift) - subCount
}

// middle returns the value reported for a bucket: its midpoint.
func middle(i int) int64 {
	if i < exactBelow {
		return int64(i)
	}
	shift := (i-exactBelow)/subCount + 1
	low := int64((i-exactBelow)%subCount+subCount) << shift
	return low + (int64(1)<<shift-1)/2
}

// Record counts one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[index(int64(d))]++
	h.total++
	h.sum += float64(d)
	if d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
}

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count reports the number of recorded samples.
func (h *Histogram) Count() uint64 { return h.total }

// Min reports the smallest sample exactly, or 0 when empty.
func (h *Histogram) Min() time.Duration {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Max reports the largest sample exactly, or 0 when empty.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean reports the arithmetic mean of the samples, or 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.total == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.total))
}

// Quantile reports the nearest-rank q-quantile (0 < q ≤ 1): the sample of
// rank ⌈q·n⌉ in sorted order, within MaxRelativeError. It reports 0 when the
// histogram is empty; q ≤ 0 gives the minimum and q ≥ 1 the maximum.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := time.Duration(middle(i))
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
