package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// children caches the series of each route, method and status, so a
	// request costs one map lookup instead of hashing its label values
	// into both vectors. Routes are the registered paths, so it stays
	// small.
	children sync.Map // metricKey → *routeMetrics
}

type metricKey struct {
	route, method string
	status        int
}

type routeMetrics struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func (m *httpMetrics) of(route, method string, status int) *routeMetrics {
	k := metricKey{route, method, status}
	if rm, ok := m.children.Load(k); ok {
		return rm.(*routeMetrics)
	}
	rm := &routeMetrics{
		requests: m.requests.WithLabelValues(route, method, strconv.Itoa(status)),
		latency:  m.latency.WithLabelValues(route),
	}
	actual, _ := m.children.LoadOrStore(k, rm)
	return actual.(*routeMetrics)
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aditus_queue_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "aditus_queue_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// registerJoinMetrics exports the front's gathered joins, its batches and
// its busy refusals.
func registerJoinMetrics(reg prometheus.Registerer, n *front.Front) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aditus_queue_joins_pending",
			Help: "Joins this front has gathered, in all rooms, that are not on their way to a grain yet."},
			func() float64 { return float64(n.JoinsPending()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aditus_queue_join_batches_total",
			Help: "Batches of joins this front has sent to grains (joins per batch: the joins answered over this)."},
			func() float64 { return float64(n.JoinBatches()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aditus_queue_joins_busy_total",
			Help: "Joins refused busy because their room's gathered joins were at the bound."},
			func() float64 { return float64(n.JoinsRefused()) }))
}

// observe counts a request that started at start and ended with err per
// route, and returns the error still to be handled: the health check is
// left out, so monitoring pings do not distort the traffic picture; other
// errors are answered here, so that the status counted is the one sent.
func (m *httpMetrics) observe(c echo.Context, start time.Time, err error) error {
	route := c.Path()
	if route == "/queue/healthz" || route == "/metrics" {
		return err
	}
	if route == "" {
		route = "unmatched"
	}
	status := c.Response().Status
	if err != nil {
		c.Error(err)
		status = c.Response().Status
		err = nil
	}
	rm := m.of(route, metricMethod(c.Request().Method), status)
	rm.requests.Inc()
	rm.latency.Observe(time.Since(start).Seconds())
	return err
}

// metricMethod is the label of a request's method: the methods of HTTP
// (RFC 9110 and PATCH) as sent, any other under "other". A client chooses
// the method, and each value would be a series kept for good: 500
// invented 4 KB methods would leave a 2 MB metrics page.
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
