package load

import (
	"testing"
	"time"
)

func TestRecorderFlip(t *testing.T) {
	r := NewRecorder()
	for i := range 100 {
		r.Record(time.Duration(i+1)*time.Millisecond, OK)
	}
	r.Record(0, ClassTimeout)
	s := r.Flip(2 * time.Second)
	if s.Index != 1 || s.OK != 100 || s.Requests != 101 || s.Errors[ClassTimeout] != 1 || s.Rate != 50 {
		t.Errorf("first second: got %+v", s)
	}
	if s.P50 < 49*time.Millisecond || s.P50 > 51*time.Millisecond {
		t.Errorf("p50: got %v, want about 50ms", s.P50)
	}
	s = r.Flip(time.Second)
	if s.Index != 2 || s.Requests != 0 || s.P99 != 0 {
		t.Errorf("empty second: got %+v", s)
	}
	c, h := r.Total()
	if c.Requests != 101 || c.ErrorCount() != 1 || h.Count() != 100 {
		t.Errorf("total: got %+v, %d latencies", c, h.Count())
	}
}

func BenchmarkRecorderParallel(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Millisecond
		for pb.Next() {
			r.Record(d, OK)
			d += time.Microsecond
		}
	})
}
