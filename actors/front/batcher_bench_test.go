package front_test

import (
	"context"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// BenchmarkGrainBatch measures the room grain alone: batches of 100
// numbers asked over the cluster client as a front node's batcher asks
// them, 8 callers per CPU (fronts), every number from a block the embedded
// file log has appended and fsynced before it is handed out. numbers/s is
// the figure; one op is one batch.
func BenchmarkGrainBatch(b *testing.B) {
	n, cr := nodetest.BenchRoom(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id := cr.View.ID
	const size = 100
	req := protocol.JoinBatchRequest{Count: size, Known: true, Epoch: cr.View.Epoch, Version: cr.View.Version}
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := req
		for pb.Next() {
			var res protocol.JoinBatchResult
			if err := n.Client.Call(ctx, id, protocol.KindRoom, protocol.OpJoinBatch, req, &res); err != nil {
				b.Error(err)
				return
			}
			if res.Count != size || res.First == 0 {
				b.Errorf("batch answer %+v", res)
				return
			}
			// As the batcher does: the view comes back only when it changed.
			req.Epoch, req.Version = res.Epoch, res.Version
		}
	})
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "numbers/s")
}
