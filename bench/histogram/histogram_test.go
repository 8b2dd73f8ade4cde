package histogram

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactQuantile is the nearest-rank quantile of sorted samples.
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = max(rank, 1)
	return sorted[rank-1]
}

func TestQuantilesWithinBoundedError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		n    int
		draw func(i int) time.Duration
	}{
		{"uniform 1..1e6 ns", 1_000_000, func(i int) time.Duration { return time.Duration(i + 1) }},
		{"exponential mean 2ms", 200_000, func(int) time.Duration {
			return time.Duration(rng.ExpFloat64() * float64(2*time.Millisecond))
		}},
		{"log-normal around 5ms", 200_000, func(int) time.Duration {
			return time.Duration(math.Exp(rng.NormFloat64()*1.2) * float64(5*time.Millisecond))
		}},
		{"bimodal 1ms and 800ms", 100_000, func(i int) time.Duration {
			if i%50 == 0 {
				return 800*time.Millisecond + time.Duration(rng.IntN(1000))*time.Microsecond
			}
			return time.Millisecond + time.Duration(rng.IntN(100))*time.Microsecond
		}},
		{"hours", 1000, func(i int) time.Duration { return time.Duration(i+1) * time.Hour }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New()
			samples := make([]time.Duration, tc.n)
			for i := range samples {
				samples[i] = tc.draw(i)
				h.Record(samples[i])
			}
			slices.Sort(samples)
			if got := h.Count(); got != uint64(tc.n) {
				t.Fatalf("count: got %d, want %d", got, tc.n)
			}
			for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999} {
				want := exactQuantile(samples, q)
				got := h.Quantile(q)
				if rel := math.Abs(float64(got-want)) / float64(want); rel > MaxRelativeError {
					t.Errorf("q=%v: got %v, want %v (relative error %.5f > %.5f)", q, got, want, rel, MaxRelativeError)
				}
			}
			if got, want := h.Min(), samples[0]; got != want {
				t.Errorf("min: got %v, want %v", got, want)
			}
			if got, want := h.Max(), samples[len(samples)-1]; got != want {
				t.Errorf("max: got %v, want %v", got, want)
			}
			if got, want := h.Quantile(1), samples[len(samples)-1]; got != want {
				t.Errorf("q=1: got %v, want %v", got, want)
			}
		})
	}
}

func TestSmallValuesAreExact(t *testing.T) {
	h := New()
	for v := range 256 {
		h.Record(time.Duration(v))
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 127}, {0.25, 63}, {1.0 / 256, 0}, {1, 255}} {
		if got := h.Quantile(tc.q); got != tc.want {
			t.Errorf("q=%v: got %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestBucketsCoverEveryValue(t *testing.T) {
	for _, v := range []int64{0, 1, 255, 256, 257, 511, 512, 1 << 40, math.MaxInt64} {
		i := index(v)
		if i < 0 || i >= bucketCount {
			t.Fatalf("index(%d) = %d, outside [0, %d)", v, i, bucketCount)
		}
		if m := middle(i); math.Abs(float64(m-v))/math.Max(float64(v), 1) > MaxRelativeError {
			t.Errorf("middle(index(%d)) = %d: too far", v, m)
		}
	}
	// Buckets are ordered: a larger value never lands in an earlier bucket.
	prev := 0
	for v := int64(0); v < 1<<16; v++ {
		i := index(v)
		if i < prev {
			t.Fatalf("index(%d) = %d < index(%d) = %d", v, i, v-1, prev)
		}
		prev = i
	}
}

func TestMergeEqualsRecordingTogether(t *testing.T) {
	a, b, both := New(), New(), New()
	for i := range 10_000 {
		d := time.Duration(i*i) * time.Nanosecond
		both.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(b)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		if got, want := a.Quantile(q), both.Quantile(q); got != want {
			t.Errorf("q=%v: got %v, want %v", q, got, want)
		}
	}
	if a.Count() != both.Count() || a.Min() != both.Min() || a.Max() != both.Max() {
		t.Errorf("merged count/min/max %d/%v/%v, want %d/%v/%v", a.Count(), a.Min(), a.Max(), both.Count(), both.Min(), both.Max())
	}
}

func TestEmpty(t *testing.T) {
	h := New()
	if h.Quantile(0.99) != 0 || h.Min() != 0 || h.Max() != 0 || h.Mean() != 0 {
		t.Errorf("empty histogram reports non-zero figures")
	}
	h.Record(-5)
	if got := h.Max(); got != 0 {
		t.Errorf("negative sample: got max %v, want 0", got)
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(time.Duration(i&0xfffff) * time.Microsecond)
	}
}
