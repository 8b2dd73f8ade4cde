package grain

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// TestRoomModeGauge: the mode is a state set with one series at 1, it
// follows a change of mode, and it goes with the room's other series.
func TestRoomModeGauge(t *testing.T) {
	reg, m, now, v := gaugedRoom("sale")
	var s roomStats
	s.record(v, now, m)
	if got := modeGauges(t, reg, "sale"); len(got) != 5 || got[room.ModeQueue] != 1 || got[room.ModeSoldOut] != 0 {
		t.Fatalf("room without a mode: got %v, want queue 1 and the others 0", got)
	}
	v.Config.Mode = room.ModeSoldOut
	s.record(v, now.Add(2*time.Second), m)
	if got := modeGauges(t, reg, "sale"); got[room.ModeQueue] != 0 || got[room.ModeSoldOut] != 1 {
		t.Fatalf("after the change to soldOut: got %v", got)
	}
	s.forget(m)
	if got := modeGauges(t, reg, "sale"); len(got) != 0 {
		t.Fatalf("after forget: got %v, want no series", got)
	}
}

func modeGauges(t *testing.T, reg *prometheus.Registry, slug string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != MetricRoomMode {
			continue
		}
		for _, mm := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range mm.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["room"] == slug {
				got[labels["mode"]] = mm.GetGauge().GetValue()
			}
		}
	}
	return got
}
