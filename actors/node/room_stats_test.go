package node

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestAdjustmentsComeFromTheRateLog(t *testing.T) {
	st := room.New("r1")
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < maxAdjustments+5; i++ {
		st.RateChanges = append(st.RateChanges, room.RateChange{At: at.Add(time.Duration(i) * time.Second),
			From: float64(100 + i), To: float64(101 + i), Rule: "responseMs < 500", Reason: "all rules hold"})
	}
	got := adjustments(st)
	if len(got) != maxAdjustments {
		t.Fatalf("got %d adjustments, want %d", len(got), maxAdjustments)
	}
	first, last := got[0], got[len(got)-1]
	if first.From != 105 || last.To != float64(101+maxAdjustments+4) {
		t.Fatalf("got first %+v last %+v, want the newest %d oldest first", first, last, maxAdjustments)
	}
	if last.Rule != "responseMs < 500" || last.Reason != "all rules hold" || !last.At.Equal(at.Add(54*time.Second)) {
		t.Fatalf("got %+v", last)
	}
	if got := adjustments(room.New("r2")); got == nil || len(got) != 0 {
		t.Fatalf("got %v for a room without changes, want an empty list", got)
	}
}

func TestTestRoomsStayOutOfTheRoomGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	v := &room.View{ID: "r1", Exists: true}
	v.Config.Slug, v.Config.RatePerMinute = "prod-sale", 60
	var s roomStats
	s.record(v, now, m)
	if n := roomSeries(t, reg, "prod-sale"); n == 0 {
		t.Fatal("a production room has no gauges")
	}
	v.Config.Test = true
	s.record(v, now.Add(2*time.Second), m)
	if n := roomSeries(t, reg, "prod-sale"); n != 0 {
		t.Fatalf("a test room still has %d gauge series", n)
	}
}

func roomSeries(t *testing.T, reg *prometheus.Registry, slug string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "aditus_queue_room_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "room" && l.GetValue() == slug {
					n++
				}
			}
		}
	}
	return n
}
