package grain

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestTestRoomsStayOutOfTheRoomGauges(t *testing.T) {
	reg, m, now, v := gaugedRoom("prod-sale")
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

// gaugedRoom is a room named slug with the metrics its stats export to.
func gaugedRoom(slug string) (*prometheus.Registry, *Metrics, time.Time, *room.View) {
	reg := prometheus.NewRegistry()
	v := &room.View{ID: "r1", Exists: true}
	v.Config.Slug, v.Config.RatePerMinute = slug, 60
	return reg, NewMetrics(reg), time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), v
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
