package proxy

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Reloading the configuration (SIGHUP). Nobody's place or slot lives in a
// proxy node: slots and lines are the rooms' grains', a visitor's cookie is
// sealed with the room's key (kept in the room, or derived from its
// secret), and the room is found by its host and name. So a reload builds
// a new Handler from the file and swaps it in: a room of the same host and
// name is the same room, with the same line and slots; the old handler
// sends its last renewal batch as it closes. A file that does not load is
// refused: the handler in force keeps serving, the error is logged and
// counted.

// Reloadable serves the Handler built from its file, rebuilt by Reload.
type Reloadable struct {
	path string
	opts Options
	log  *slog.Logger
	cur  atomic.Pointer[Handler]
	// mu serialises reloads.
	mu       sync.Mutex
	reloads  atomic.Uint64
	failures atomic.Uint64
}

// NewReloadable loads path and serves it until Reload or Close.
func NewReloadable(path string, o Options) (*Reloadable, error) {
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	h, err := New(cfg, o)
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	r := &Reloadable{path: path, opts: o, log: log}
	r.cur.Store(h)
	return r, nil
}

// ServeHTTP implements http.Handler with the handler in force.
func (r *Reloadable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.cur.Load().ServeHTTP(w, req)
}

// Handler is the handler in force.
func (r *Reloadable) Handler() *Handler { return r.cur.Load() }

// Reload reads the file again and swaps in the handler it describes. On
// any error the handler in force stays, and the error is returned (and
// logged, and counted).
func (r *Reloadable) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.reload()
	if err != nil {
		r.failures.Add(1)
		r.log.Error("configuration not reloaded: the one in force keeps serving", "config", r.path, "error", err)
		return err
	}
	r.reloads.Add(1)
	r.log.Info("configuration reloaded", "config", r.path)
	return nil
}

func (r *Reloadable) reload() error {
	cfg, err := Load(r.path)
	if err != nil {
		return err
	}
	h, err := New(cfg, r.opts)
	if err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	old := r.cur.Load()
	h.carryOver(old)
	r.cur.Store(h)
	old.Close() // its last renewal batch
	return nil
}

// carryOver gives h's rooms what old's same rooms learnt: the cookie key
// (no store round trip for the first request), the released visitors
// (their old cookies must not admit them again), the proof of work and
// runtime settings in force until the next batch.
func (h *Handler) carryOver(old *Handler) {
	h.fastSrv.Store(old.fastSrv.Load()) // its refusals are counted on
	by := map[string]*gate{}
	for _, g := range old.gates {
		by[g.id] = g
	}
	for _, g := range h.gates {
		o, ok := by[g.id]
		if !ok {
			continue
		}
		if g.room.Secret == o.room.Secret && g.box.Load() == nil {
			if b := o.box.Load(); b != nil {
				g.box.Store(b)
			}
		}
		o.mu.Lock()
		for id, exp := range o.released {
			g.released[id] = exp
			g.nReleased.Add(1)
		}
		o.mu.Unlock()
		g.setPow(int(o.pow.bits.Load()))
		if a := o.rt.answer.Load(); a != nil {
			g.learn(*a)
		}
	}
}

// Close closes the handler in force.
func (r *Reloadable) Close() { r.cur.Load().Close() }

var (
	reloadsDesc = prometheus.NewDesc("aditus_queue_proxy_config_reloads_total",
		"Reloads of the proxy's configuration file (SIGHUP) that took effect.", nil, nil)
	reloadFailuresDesc = prometheus.NewDesc("aditus_queue_proxy_config_reload_failures_total",
		"Reloads of the proxy's configuration file refused (the file did not load): the configuration in force kept serving.", nil, nil)
)

// Collector is the metrics of the handler in force, and of the reloads.
func (r *Reloadable) Collector() prometheus.Collector { return reloadCollector{r} }

type reloadCollector struct{ r *Reloadable }

func (c reloadCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- reloadsDesc
	ch <- reloadFailuresDesc
	collector{}.Describe(ch)
}

func (c reloadCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(c.r.reloads.Load()))
	ch <- prometheus.MustNewConstMetric(reloadFailuresDesc, prometheus.CounterValue, float64(c.r.failures.Load()))
	collector{c.r.cur.Load()}.Collect(ch)
}
