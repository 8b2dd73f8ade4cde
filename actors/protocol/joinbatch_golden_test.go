package protocol

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The batch messages' bytes, copied from the output of the codec as the
// previous release has it (deploy/upgrade/previous): nodes of both
// releases read each other's during a rolling upgrade, so these bytes
// never change. (A result that carries the view is encoding/json's
// encoding of room.View, not this codec's, and is not pinned here.)
var (
	goldenRequests = []struct {
		v    JoinBatchRequest
		wire string
	}{
		{JoinBatchRequest{}, `{"count":0}`},
		{JoinBatchRequest{Count: 1}, `{"count":1}`},
		{JoinBatchRequest{Count: 512, Known: true}, `{"count":512,"known":true}`},
		{JoinBatchRequest{Count: 512, Known: true, Epoch: 3, Version: 77}, `{"count":512,"known":true,"epoch":3,"version":77}`},
		{JoinBatchRequest{Count: 4096, Known: true, Epoch: -1, Version: math.MaxUint64},
			`{"count":4096,"known":true,"epoch":-1,"version":18446744073709551615}`},
		{JoinBatchRequest{Count: math.MaxUint64, Epoch: math.MinInt64, Version: 1},
			`{"count":18446744073709551615,"epoch":-9223372036854775808,"version":1}`},
		{JoinBatchRequest{Count: 7, Version: 2}, `{"count":7,"version":2}`},
	}
	goldenResults = []struct {
		v    JoinBatchResult
		wire string
	}{
		{JoinBatchResult{}, `{"first":0,"count":0,"epoch":0,"version":0,"line":{"base":0,"t0":0,"rate":0},"issued":0}`},
		{JoinBatchResult{First: 1, Count: 1, Epoch: 1, Version: 1, Line: room.Line{Base: 5, T0: 1764800000000000000, Rate: 60}, Issued: 1},
			`{"first":1,"count":1,"epoch":1,"version":1,"line":{"base":5,"t0":1764800000000000000,"rate":60},"issued":1}`},
		{JoinBatchResult{First: 1 << 40, Count: 512, Epoch: 7, Version: 123, Line: room.Line{Base: 1234.5678901234, T0: -5, Rate: 0.1},
			Issued: 1<<40 + 511},
			`{"first":1099511627776,"count":512,"epoch":7,"version":123,"line":{"base":1234.5678901234,"t0":-5,"rate":0.1},"issued":1099511628287}`},
		{JoinBatchResult{First: 3, Count: 2, Line: room.Line{Base: 1e-9, Rate: 1e22}, Issued: 4},
			`{"first":3,"count":2,"epoch":0,"version":0,"line":{"base":1e-9,"t0":0,"rate":1e+22},"issued":4}`},
		{JoinBatchResult{First: 3, Count: 2, Line: room.Line{Base: 0.000001, Rate: 123456789012345678901.0}, Issued: 4},
			`{"first":3,"count":2,"epoch":0,"version":0,"line":{"base":0.000001,"t0":0,"rate":123456789012345680000},"issued":4}`},
		{JoinBatchResult{First: 3, Count: 2, Line: room.Line{Base: -0.5, T0: math.MaxInt64, Rate: 1e-7}, Issued: 4},
			`{"first":3,"count":2,"epoch":0,"version":0,"line":{"base":-0.5,"t0":9223372036854775807,"rate":1e-7},"issued":4}`},
		{JoinBatchResult{First: math.MaxUint64, Count: math.MaxUint64, Epoch: math.MinInt64, Version: math.MaxUint64,
			Line: room.Line{Base: math.MaxFloat64, T0: math.MinInt64, Rate: math.SmallestNonzeroFloat64}, Issued: math.MaxUint64},
			`{"first":18446744073709551615,"count":18446744073709551615,"epoch":-9223372036854775808,"version":18446744073709551615,` +
				`"line":{"base":1.7976931348623157e+308,"t0":-9223372036854775808,"rate":5e-324},"issued":18446744073709551615}`},
	}
)

// The batch messages are written as the previous release wrote them, both
// directly and through encoding/json, and its bytes read back to the same
// values both ways.
func TestBatchMessagesGolden(t *testing.T) {
	for _, g := range goldenRequests {
		checkGolden(t, g.v, g.wire, g.v.MarshalJSON, func(b []byte) (any, error) {
			var r JoinBatchRequest
			return r, r.UnmarshalJSON(b)
		})
	}
	for _, g := range goldenResults {
		checkGolden(t, g.v, g.wire, g.v.MarshalJSON, func(b []byte) (any, error) {
			var r JoinBatchResult
			err := r.UnmarshalJSON(b)
			return r, err
		})
	}
}

// checkGolden checks that v is written as wire by write and by json.Marshal,
// and that read and json.Unmarshal read wire back as v.
func checkGolden[T comparable](t *testing.T, v T, wire string, write func() ([]byte, error), read func([]byte) (any, error)) {
	t.Helper()
	if b, err := write(); err != nil || string(b) != wire {
		t.Errorf("%+v written as %s (%v), want %s", v, b, err, wire)
	}
	if b, err := json.Marshal(v); err != nil || string(b) != wire {
		t.Errorf("%+v through encoding/json: %s (%v), want %s", v, b, err, wire)
	}
	if got, err := read([]byte(wire)); err != nil || got != any(v) {
		t.Errorf("%s read as %+v (%v), want %+v", wire, got, err, v)
	}
	var back T
	if err := json.Unmarshal([]byte(wire), &back); err != nil || back != v {
		t.Errorf("%s through encoding/json: %+v (%v), want %+v", wire, back, err, v)
	}
}
