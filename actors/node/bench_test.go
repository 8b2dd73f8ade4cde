package node

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// benchRoom starts a member on the embedded file log and creates a room of
// 100,000 admissions a minute on it.
func benchRoom(b *testing.B) (*Node, *protocol.CreateResult) {
	b.Helper()
	l, err := filelog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	n, err := Start(Config{Member: true, Deps: grain.Deps{Log: l, Sealer: sealer, Hash: hash,
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
	return n, cr
}

// BenchmarkJoin measures a join through the room grain as a front node
// makes it: Client.Join over the cluster to the grain, a number from the
// reserved block (blocks are appended to the embedded file log and fsynced
// as they run out), the signed ticket and the view in the answer, decoded
// and offered to the view cache. "serial" is one caller at a time (the
// latency of the round trip); "parallel" keeps 32 callers per CPU going,
// as a busy front does (the grain's throughput).
func BenchmarkJoin(b *testing.B) {
	n, cr := benchRoom(b)
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
