package capacity

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestLineMatchesSlice runs random arrivals and departures against a plain
// slice and compares every place.
func TestLineMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	l := newLine()
	var want []string
	for step := 0; step < 20000; step++ {
		if len(want) == 0 || rng.Intn(3) > 0 {
			id := fmt.Sprint("v", step)
			l.push(id, int64(step))
			want = append(want, id)
		} else {
			i := rng.Intn(len(want))
			if rng.Intn(2) == 0 {
				i = 0 // departures from the head are the common case
			}
			l.remove(want[i])
			want = slices.Delete(want, i, i+1)
		}
		if step%97 == 0 {
			for i, id := range want {
				if n, ok := l.ahead(id); !ok || n != i {
					t.Fatalf("step %d: %s ahead %d %v, want %d", step, id, n, ok, i)
				}
			}
			if !slices.Equal(l.list(), want) || l.len() != len(want) {
				t.Fatalf("step %d: list differs", step)
			}
		}
	}
}

func BenchmarkLinePlace(b *testing.B) {
	l := newLine()
	for i := 0; i < 100_000; i++ {
		l.push(fmt.Sprint("v", i), int64(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := l.ahead("v77777"); !ok {
			b.Fatal("missing")
		}
	}
}

// BenchmarkLineInsertTail is a confirmation landing tail places from the
// end of a line of 200,000 (a refresh interval's arrivals), with an
// arrival at the end and a departure at the front, as in a sale.
func BenchmarkLineInsertTail(b *testing.B) {
	for _, tail := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(tail), func(b *testing.B) {
			l := newLine()
			for i := 0; i < 200_000; i++ {
				l.push(fmt.Sprint("v", i), int64(i))
			}
			n := 200_000
			b.ReportAllocs()
			for b.Loop() {
				l.insert(fmt.Sprint("c", n), int64(n-tail))
				l.push(fmt.Sprint("v", n), int64(n))
				l.remove(fmt.Sprint("v", n-200_000))
				n++
			}
		})
	}
}
