package grain

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the grain-side counters exported on /metrics.
type Metrics struct {
	Joins       prometheus.Counter
	Tokens      prometheus.Counter
	Activations prometheus.Counter
	// Admissions counts regular admissions (tokens for a number); Bypasses
	// counts bypass-code admissions, which take no slot.
	Admissions prometheus.Counter
	Bypasses   prometheus.Counter
	// Rooms are the per-room gauges of the rooms hosted here.
	Rooms *RoomGauges
	// RoomsUnavailable counts the rooms this node holds a view of but does
	// not serve, because their keys do not open with its master key.
	RoomsUnavailable prometheus.Gauge
	// ReturnsRefused counts tickets of a restore's jump that came back and
	// were not placed: the room's bound of returns, or of returns waiting
	// to be written, was reached (room_returns.go).
	ReturnsRefused prometheus.Counter
	// FileDisagreements counts the renewal batches of proxy nodes whose
	// file gives a capacity room other settings than the room holds.
	FileDisagreements prometheus.Counter
}

// NewMetrics registers the grain counters with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Joins:       prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_joins_total", Help: "Numbers issued."}),
		Tokens:      prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_tokens_issued_total", Help: "Admission tokens minted (admissions and bypasses)."}),
		Activations: prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_grain_activations_total", Help: "Room grain activations on this member."}),
		Admissions:  prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_admissions_total", Help: "Admission tokens minted for a waiting number."}),
		Bypasses:    prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_bypass_admissions_total", Help: "Admission tokens minted for a bypass code."}),
	}
	m.RoomsUnavailable = prometheus.NewGauge(prometheus.GaugeOpts{Name: "aditus_queue_rooms_unavailable",
		Help: "Rooms this node does not serve because their keys do not open with its master key."})
	m.ReturnsRefused = prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_restore_returns_refused_total",
		Help: "Tickets of a restore's jump that came back and were not placed (bound reached); their holders join again."})
	m.FileDisagreements = prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_capacity_file_disagreements_total",
		Help: "Renewal batches of proxy nodes whose file gives a capacity room other settings than the room holds (the newest file's)."})
	reg.MustRegister(m.Joins, m.Tokens, m.Activations, m.Admissions, m.Bypasses, m.RoomsUnavailable, m.ReturnsRefused, m.FileDisagreements)
	m.Rooms = newRoomGauges(reg)
	return m
}
