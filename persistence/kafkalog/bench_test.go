package kafkalog

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// BenchmarkAppend: many callers append small records (64 bytes) to 64
// streams at once, as room grains do; group commit lets them share requests.
func BenchmarkAppend(b *testing.B) {
	l := open(b, testConfig(b, 8))
	defer l.Close()
	payload := bytes.Repeat([]byte("x"), 64)
	for _, callers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			b.ReportAllocs()
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for c := 0; c < callers; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					stream := fmt.Sprintf("room-%d", c%64)
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t0 := time.Now()
						if _, err := l.Append(ctx, stream, payload); err != nil {
							b.Error(err)
							return
						}
						lat[i] = time.Since(t0)
					}
				}(c)
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkReplay: one stream of 10^6 small events (about 40 bytes each),
// read from the start.
func BenchmarkReplay(b *testing.B) {
	const events, perAppend = 1_000_000, 1000
	l := open(b, testConfig(b, 8))
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const stream = "room-replay"
	batch := make([][]byte, perAppend)
	start := time.Now()
	for i := 0; i < events; i += perAppend {
		for j := range batch {
			batch[j] = []byte(fmt.Sprintf("reserved-upto-%012d-epoch-7", i+j))
		}
		if _, err := l.Append(ctx, stream, batch...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("wrote %d events in %v", events, time.Since(start).Round(time.Millisecond))
	b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			if _, err := l.Replay(ctx, stream, -1, func(persistence.Record) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
			if n != events {
				b.Fatalf("replayed %d events, want %d", n, events)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/replay")
		b.ReportMetric(float64(events*b.N)/b.Elapsed().Seconds(), "events/s")
	})
}
