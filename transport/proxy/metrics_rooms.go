package proxy

import "github.com/prometheus/client_golang/prometheus"

// The capacity rooms' gauges as this node last learnt them from the room
// (runtime.go: about every half second). Rooms are the operator's file,
// yet their series are capped at maxRoomSeries rooms a node; the rooms
// past it are counted in roomsUnlistedDesc.
const maxRoomSeries = 200

var (
	roomLabels        = []string{"host", "room"}
	roomInsideDesc    = prometheus.NewDesc("aditus_queue_capacity_inside", "Visitors holding a slot of the capacity room.", roomLabels, nil)
	roomActiveDesc    = prometheus.NewDesc("aditus_queue_capacity_active", "The capacity room's active in force (the file's, or the runtime's change).", roomLabels, nil)
	roomWaitingDesc   = prometheus.NewDesc("aditus_queue_capacity_waiting", "Visitors waiting in the capacity room's line.", roomLabels, nil)
	roomProvDesc      = prometheus.NewDesc("aditus_queue_capacity_provisional", "Provisional places given within the capacity room's last provisional window.", roomLabels, nil)
	roomAdmittedDesc  = prometheus.NewDesc("aditus_queue_capacity_admitted_per_minute", "Admissions to the capacity room over the last minute.", roomLabels, nil)
	roomExpiredDesc   = prometheus.NewDesc("aditus_queue_capacity_expired_per_minute", "Slots of the capacity room whose session ended over the last minute.", roomLabels, nil)
	roomPausedDesc    = prometheus.NewDesc("aditus_queue_capacity_paused", "1 while the capacity room is paused at runtime (nobody new let in).", roomLabels, nil)
	roomOpenDesc      = prometheus.NewDesc("aditus_queue_capacity_open", "1 while the capacity room lets everyone in at runtime.", roomLabels, nil)
	roomVersionDesc   = prometheus.NewDesc("aditus_queue_capacity_runtime_version", "The capacity room's runtime version this node last learnt (0: the file's settings).", roomLabels, nil)
	roomsUnlistedDesc = prometheus.NewDesc("aditus_queue_capacity_rooms_unlisted", "Capacity rooms of this node past the cap of rooms with their own series.", nil, nil)
)

func describeRooms(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{roomInsideDesc, roomActiveDesc, roomWaitingDesc, roomProvDesc, roomAdmittedDesc,
		roomExpiredDesc, roomPausedDesc, roomOpenDesc, roomVersionDesc, roomsUnlistedDesc} {
		ch <- d
	}
}

func (c collector) collectRooms(ch chan<- prometheus.Metric) {
	unlisted := 0
	for i, g := range c.h.gates {
		a := g.rt.answer.Load()
		if a == nil {
			continue
		}
		if i >= maxRoomSeries {
			unlisted++
			continue
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, g.room.Host, g.room.Name)
		}
		gauge(roomInsideDesc, float64(a.Figures.Inside))
		gauge(roomActiveDesc, float64(a.Settings.Active))
		gauge(roomWaitingDesc, float64(a.Figures.Waiting))
		gauge(roomProvDesc, float64(a.Figures.Provisional))
		gauge(roomAdmittedDesc, float64(a.Figures.AdmittedPerMinute))
		gauge(roomExpiredDesc, float64(a.Figures.ExpiredPerMinute))
		gauge(roomPausedDesc, b2f(a.Paused))
		gauge(roomOpenDesc, b2f(a.Open))
		gauge(roomVersionDesc, float64(a.Version))
	}
	ch <- prometheus.MustNewConstMetric(roomsUnlistedDesc, prometheus.GaugeValue, float64(unlisted))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
