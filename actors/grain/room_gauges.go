package grain

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// RoomGauges are the per-room dashboard figures on /metrics, labelled by
// the room's slug. A member exports the rooms whose grains it hosts and
// drops a room's series when the grain stops or the room is deleted, so
// summing over members gives one series per room.
type RoomGauges struct {
	waiting, serving, issued, rate, inflow *prometheus.GaugeVec
	// mode is a state set: one series per room and mode, 1 for the mode
	// in force and 0 for the others.
	mode *prometheus.GaugeVec
}

// Room gauge names, as the Grafana dashboard in deploy/grafana uses them.
const (
	MetricRoomWaiting = "aditus_queue_room_waiting"
	MetricRoomServing = "aditus_queue_room_serving"
	MetricRoomIssued  = "aditus_queue_room_issued"
	MetricRoomRate    = "aditus_queue_room_rate_per_minute"
	MetricRoomInflow  = "aditus_queue_room_inflow_per_minute"
	MetricRoomMode    = "aditus_queue_room_mode"
)

func newRoomGauges(reg prometheus.Registerer) *RoomGauges {
	vec := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"room"})
	}
	g := &RoomGauges{
		waiting: vec(MetricRoomWaiting, "Numbers issued and not yet admitted, by room slug."),
		serving: vec(MetricRoomServing, "Admission positions reached, by room slug."),
		issued:  vec(MetricRoomIssued, "Numbers issued, by room slug."),
		rate:    vec(MetricRoomRate, "Admission rate per minute, by room slug."),
		inflow:  vec(MetricRoomInflow, "New visitors (joins) per minute over the last 60 s, by room slug."),
	}
	g.mode = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricRoomMode,
		Help: "1 for the room's mode (queue, passthrough, soldOut, maintenance, queueAll), 0 for the others, by room slug."},
		[]string{"room", "mode"})
	reg.MustRegister(g.waiting, g.serving, g.issued, g.rate, g.inflow, g.mode)
	return g
}

// Set exports sample sm of the room named slug.
func (g *RoomGauges) Set(slug string, sm room.Sample) {
	g.waiting.WithLabelValues(slug).Set(float64(sm.Waiting))
	g.serving.WithLabelValues(slug).Set(float64(sm.Serving))
	g.issued.WithLabelValues(slug).Set(float64(sm.Issued))
	g.rate.WithLabelValues(slug).Set(sm.Rate)
	g.inflow.WithLabelValues(slug).Set(sm.Inflow)
}

// SetMode exports the mode of the room named slug.
func (g *RoomGauges) SetMode(slug, mode string) {
	for _, m := range room.Modes {
		v := 0.0
		if m == mode {
			v = 1
		}
		g.mode.WithLabelValues(slug, m).Set(v)
	}
}

// Delete drops the series of the room named slug.
func (g *RoomGauges) Delete(slug string) {
	for _, v := range []*prometheus.GaugeVec{g.waiting, g.serving, g.issued, g.rate, g.inflow} {
		v.DeleteLabelValues(slug)
	}
	g.mode.DeletePartialMatch(prometheus.Labels{"room": slug})
}
