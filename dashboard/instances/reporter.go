// Package instances is the cluster's view of its own nodes: every node,
// member or front, reports itself every protocol.ReportInterval to the
// registry grain (see actors/grain's registryGrain for why a grain), and
// GET /api/admin/queue/instances lists the nodes that reported within
// protocol.InstanceTTL.
package instances

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/release"
)

// Config describes the reporting node.
type Config struct {
	Node      *front.Front
	Roles     []string
	PublicURL string
	// Build is what the binary is and the features it announces
	// (release.Get() when left empty).
	Build release.Info
	// Requests returns the HTTP requests this node has answered so far
	// (a counter); nil reports no request rate.
	Requests func() float64
	// Sockets returns the open WebSockets (visitor and dashboard).
	Sockets func() int
	Logger  *slog.Logger
	// Interval overrides protocol.ReportInterval (tests).
	Interval time.Duration
}

// Reporter sends this node's report until Stop.
type Reporter struct {
	cfg     Config
	started time.Time
	meter   *meter
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// Start sends a first report at once, then one every interval.
func Start(cfg Config) *Reporter {
	if cfg.Interval == 0 {
		cfg.Interval = protocol.ReportInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Build.Version == "" {
		cfg.Build = release.Get()
	}
	if cfg.Sockets == nil {
		cfg.Sockets = func() int { return 0 }
	}
	r := &Reporter{cfg: cfg, started: time.Now(), meter: newMeter(cfg.Requests), done: make(chan struct{})}
	r.wg.Add(1)
	go r.loop()
	return r
}

func (r *Reporter) loop() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Interval)
		if err := r.cfg.Node.Client.Report(ctx, r.report(time.Now())); err != nil {
			r.cfg.Logger.Debug("instance report failed", "error", err)
		}
		cancel()
		select {
		case <-r.done:
			return
		case <-t.C:
		}
	}
}

// report is this node's self-report at now.
func (r *Reporter) report(now time.Time) protocol.Instance {
	f := r.meter.measure(now, r.started)
	return protocol.Instance{ID: r.cfg.Node.ID(), Roles: r.cfg.Roles, Address: r.cfg.Node.Address(),
		PublicURL: r.cfg.PublicURL, Version: r.cfg.Build.Version, Commit: r.cfg.Build.Commit, GoVersion: r.cfg.Build.Go,
		LogFormats: r.cfg.Build.Formats, Features: r.cfg.Build.Features, StartedAt: r.started.UTC().Truncate(time.Second),
		UptimeSeconds: int64(now.Sub(r.started).Seconds()), CPUPercent: f.cpuPercent, RSSBytes: f.rss,
		HeapBytes: f.heap, Goroutines: f.goroutines, SchedLatencyP99Ms: f.schedP99Ms,
		RequestsPerSecond: f.requestsPerSecond, WebSockets: r.cfg.Sockets()}
}

// Stop ends the reports and takes the node off the list at once.
func (r *Reporter) Stop(ctx context.Context) {
	r.once.Do(func() {
		close(r.done)
		r.wg.Wait()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = r.cfg.Node.Client.Leave(ctx, r.cfg.Node.ID())
	})
}

// Register adds GET /instances to the admin group g behind adminOnly
// (403 for qak_ keys).
func Register(client *front.Client) func(g *echo.Group, adminOnly echo.MiddlewareFunc) {
	return func(g *echo.Group, adminOnly echo.MiddlewareFunc) {
		g.GET("/instances", func(c echo.Context) error {
			list, err := client.Instances(c.Request().Context())
			if err != nil {
				return err
			}
			if list == nil {
				list = []protocol.Instance{}
			}
			return c.JSON(http.StatusOK, map[string]any{"instances": list})
		}, adminOnly)
	}
}

// CounterTotal returns the sum over every series of the counter name in
// g, read when called (for Config.Requests).
func CounterTotal(g prometheus.Gatherer, name string) func() float64 {
	return func() float64 {
		mfs, err := g.Gather()
		if err != nil {
			return 0
		}
		total := 0.0
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
		return total
	}
}
