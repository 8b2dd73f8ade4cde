package node

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// BenchmarkGrainBatch measures the room grain alone: batches of 100
// numbers asked over the cluster client as a front node's batcher asks
// them, 8 callers per CPU (fronts), every number from a block the embedded
// file log has appended and fsynced before it is handed out. numbers/s is
// the figure; one op is one batch.
func BenchmarkGrainBatch(b *testing.B) {
	l, err := filelog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	n, err := Start(Config{Member: true, Deps: Deps{Log: l, Sealer: sealer, Hash: hash,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		n.Kill()
		_ = l.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cr, err := n.Client.Create(ctx, room.Config{Slug: "bench", Name: "Load test", TargetURL: "https://shop.example.com/",
		RatePerMinute: 100_000, Active: true}, "admin")
	if err != nil {
		b.Fatal(err)
	}
	id := cr.View.ID
	const size = 100
	req := JoinBatchRequest{Count: size, Known: true, Epoch: cr.View.Epoch, Version: cr.View.Version}
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := req
		for pb.Next() {
			var res JoinBatchResult
			if err := n.Client.call(ctx, id, KindRoom, opJoinBatch, req, &res); err != nil {
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
