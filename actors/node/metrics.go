package node

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the grain-side counters exported on /metrics.
type Metrics struct {
	Joins       prometheus.Counter
	Tokens      prometheus.Counter
	Activations prometheus.Counter
}

// NewMetrics registers the grain counters with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Joins:       prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_joins_total", Help: "Numbers issued."}),
		Tokens:      prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_tokens_issued_total", Help: "Admission tokens minted (admissions and bypasses)."}),
		Activations: prometheus.NewCounter(prometheus.CounterOpts{Name: "aditus_queue_grain_activations_total", Help: "Room grain activations on this member."}),
	}
	reg.MustRegister(m.Joins, m.Tokens, m.Activations)
	return m
}
