package proxy

import "github.com/prometheus/client_golang/prometheus"

// Collector is the proxy's metrics of its capacity rooms on this node:
// first requests refused for their address's budget, the automatic proof
// of work (the bits asked now, and the challenge pages answered), and the
// rooms kept closed because their key does not open, and the visitor
// connections refused over fasthttp's server's bound.
func (h *Handler) Collector() prometheus.Collector { return collector{h} }

type collector struct{ h *Handler }

var (
	refusalsDesc = prometheus.NewDesc("aditus_queue_proxy_address_budget_refusals_total",
		"First requests to capacity rooms answered 503 without a place: their client address was over the room's address budget.", nil, nil)
	powBitsDesc = prometheus.NewDesc("aditus_queue_proxy_pow_bits",
		"Proof of work new arrivals of a capacity room must solve now, in bits (0: none), as this node last learnt it.", []string{"host", "room"}, nil)
	waitingCachedDesc = prometheus.NewDesc("aditus_queue_proxy_waiting_cached_total",
		"Requests with a waiting cookie answered from the room's last answer to it: they came back sooner than the room's refresh interval.", nil, nil)
	waitingRefusalsDesc = prometheus.NewDesc("aditus_queue_proxy_waiting_refusals_total",
		"Requests with a cookie answered 503 without asking the room: their client address was over its budget of checks.", nil, nil)
	challengesDesc = prometheus.NewDesc("aditus_queue_proxy_pow_challenges_total",
		"First requests to a capacity room answered with a proof-of-work challenge.", []string{"host", "room"}, nil)
	connRefusalsDesc = prometheus.NewDesc("aditus_queue_proxy_visitor_connections_refused_total",
		"Visitor connections fasthttp's server answered 503 and closed: it was serving its bound of connections at once.", nil, nil)
	unavailableDesc = prometheus.NewDesc("aditus_queue_proxy_rooms_unavailable",
		"Capacity rooms this node keeps closed (503) because their cookie key does not open with its master key.", nil, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- refusalsDesc
	ch <- powBitsDesc
	ch <- challengesDesc
	ch <- unavailableDesc
	ch <- waitingCachedDesc
	ch <- waitingRefusalsDesc
	ch <- connRefusalsDesc
	describeRooms(ch)
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	var refused, cached, waitRefused uint64
	unavailable := 0
	for _, g := range c.h.gates {
		refused += g.budget.refused.Load()
		cached += g.waiting.cached.Load()
		waitRefused += g.waiting.refused.Load()
		if g.unusable.Load() {
			unavailable++
		}
		ch <- prometheus.MustNewConstMetric(powBitsDesc, prometheus.GaugeValue, float64(g.pow.bits.Load()), g.room.Host, g.room.Name)
		ch <- prometheus.MustNewConstMetric(challengesDesc, prometheus.CounterValue, float64(g.pow.challenges.Load()), g.room.Host, g.room.Name)
	}
	ch <- prometheus.MustNewConstMetric(refusalsDesc, prometheus.CounterValue, float64(refused))
	ch <- prometheus.MustNewConstMetric(unavailableDesc, prometheus.GaugeValue, float64(unavailable))
	ch <- prometheus.MustNewConstMetric(waitingCachedDesc, prometheus.CounterValue, float64(cached))
	ch <- prometheus.MustNewConstMetric(waitingRefusalsDesc, prometheus.CounterValue, float64(waitRefused))
	var connRefused uint32
	if s := c.h.fastSrv.Load(); s != nil {
		connRefused = s.GetRejectedConnectionsCount()
	}
	ch <- prometheus.MustNewConstMetric(connRefusalsDesc, prometheus.CounterValue, float64(connRefused))
	c.collectRooms(ch)
}
