package protocol

import (
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// BenchmarkJoinBatchCodec measures the batch messages' hand-written JSON,
// one message each way, as a front and a grain write and read them for
// every batch of joins.
func BenchmarkJoinBatchCodec(b *testing.B) {
	req := JoinBatchRequest{Count: 512, Known: true, Epoch: 3, Version: 77}
	res := JoinBatchResult{First: 1 << 40, Count: 512, Epoch: 7, Version: 123,
		Line: room.Line{Base: 1234.5678901234, T0: 1764800000000000000, Rate: 60}, Issued: 1<<40 + 511}
	reqJSON, _ := req.MarshalJSON()
	resJSON, _ := res.MarshalJSON()
	b.Run("request/write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = req.MarshalJSON()
		}
	})
	b.Run("request/read", func(b *testing.B) {
		b.ReportAllocs()
		var r JoinBatchRequest
		for b.Loop() {
			if err := r.UnmarshalJSON(reqJSON); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("result/write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = res.MarshalJSON()
		}
	})
	b.Run("result/read", func(b *testing.B) {
		b.ReportAllocs()
		var r JoinBatchResult
		for b.Loop() {
			if err := r.UnmarshalJSON(resJSON); err != nil {
				b.Fatal(err)
			}
		}
	})
}
