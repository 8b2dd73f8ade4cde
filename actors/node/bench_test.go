package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
)

// BenchmarkJoin measures a join through the room grain as a front node
// makes it: Client.Join over the cluster to the grain, a number from the
// reserved block (blocks are appended to the embedded file log and fsynced
// as they run out), the signed ticket and the view in the answer, decoded
// and offered to the view cache. "serial" is one caller at a time (the
// latency of the round trip); "parallel" keeps 32 callers per CPU going,
// as a busy front does (the grain's throughput).
func BenchmarkJoin(b *testing.B) {
	n, cr := nodetest.BenchRoom(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id := cr.View.ID
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := n.Client.Join(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "joins/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := n.Client.Join(ctx, id); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "joins/s")
	})
}
