package filelog

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"unsafe"
)

// indexFixture lays out n frames of one stream as a shared log would: other
// streams' frames between them, segments rolling, a few records a frame.
func indexFixture(r *rand.Rand, n int) []frame {
	var out []frame
	seg, pos, first := uint32(1), uint32(headerSize), int64(0)
	for range n {
		pos += uint32(r.IntN(4) * r.IntN(600)) // other streams' frames
		if r.IntN(500) == 0 || pos > 60<<20 {
			seg, pos = seg+1, uint32(headerSize)
		}
		f := frame{first: first, seg: seg, pos: pos, size: uint32(40 + r.IntN(400)), count: uint32(1 + r.IntN(3))}
		out = append(out, f)
		pos += f.size
		first += int64(f.count)
	}
	return out
}

func TestIndexLookupMatchesEveryFrame(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	frames := indexFixture(r, 5000)
	var x index
	for i, f := range frames {
		x.add(f)
		if i%777 == 0 {
			// Half-filled blocks are read as they stand.
			v := x.viewLocked()
			if got, ok := v.lookup(f.first, nil); !ok || got != f {
				t.Fatalf("frame %d while filling: got %+v %v, want %+v", i, got, ok, f)
			}
		}
	}
	if got := x.frameCount(); got != len(frames) {
		t.Fatalf("got %d frames, want %d", got, len(frames))
	}
	v := x.viewLocked()
	buf := make([]frame, 0, blockFrames)
	for i, f := range frames {
		for k := int64(0); k < int64(f.count); k++ {
			got, ok := v.lookup(f.first+k, buf)
			if !ok || got != f {
				t.Fatalf("offset %d (frame %d): got %+v %v, want %+v", f.first+k, i, got, ok, f)
			}
		}
	}
	last := frames[len(frames)-1]
	if _, ok := v.lookup(last.first+int64(last.count), buf); ok {
		t.Fatal("an offset past the end was found")
	}
	var decoded []frame
	for i := 0; i < v.len(); i++ {
		decoded = append(decoded, v.at(i).frames(nil)...)
	}
	if fmt.Sprint(decoded) != fmt.Sprint(frames) {
		t.Fatal("the blocks decode to other frames than were added")
	}
}

// TestIndexMemoryPerFrame holds the index to its budget: under 8 bytes a
// frame, where a plain table takes 24.
func TestIndexMemoryPerFrame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var x index
	const n = 200_000
	for _, f := range indexFixture(r, n) {
		x.add(f)
	}
	if per := float64(x.memory()) / n; per >= 8 {
		t.Fatalf("index takes %.1f bytes a frame, want under 8", per)
	}
}

// BenchmarkIndexLookup finds the frame of a random offset in a stream of a
// million frames, in the sparse index and, for comparison in the same run,
// in a plain table of 24-byte entries (what the index was before), and
// reports each one's memory per million frames.
func BenchmarkIndexLookup(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	frames := indexFixture(r, 1_000_000)
	end := frames[len(frames)-1].first
	b.Run("sparse", func(b *testing.B) {
		var x index
		for _, f := range frames {
			x.add(f)
		}
		v := x.viewLocked()
		buf := make([]frame, 0, blockFrames)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := v.lookup(r.Int64N(end), buf); !ok {
				b.Fatal("not found")
			}
		}
		b.ReportMetric(float64(x.memory())/float64(len(frames))*1e6/(1<<20), "MiB/Mframes")
	})
	b.Run("table", func(b *testing.B) {
		table := append([]frame(nil), frames...)
		b.ReportAllocs()
		for b.Loop() {
			off := r.Int64N(end)
			i := sort.Search(len(table), func(i int) bool { return table[i].first+int64(table[i].count) > off })
			if i == len(table) {
				b.Fatal("not found")
			}
		}
		b.ReportMetric(float64(cap(table))*float64(unsafe.Sizeof(frame{}))/float64(len(frames))*1e6/(1<<20), "MiB/Mframes")
	})
}
