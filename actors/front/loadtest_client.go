package front

import (
	"context"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// keepAliveEvery is how often each member pokes the load-test grain, so
// that its schedules run (and an interrupted run is marked) without
// waiting for an operator's call, also after a fail-over.
const keepAliveEvery = 5 * time.Second

// KeepLoadTests pokes the load-test grain every keepAliveEvery until the
// returned stop is called; stop waits for the goroutine. The first poke
// waits one interval: right after start the member list is still settling,
// and protoactor's identity lookup swaps its member list without a lock
// (docs/architecture.md, "Dependencies", pitfall 5), so a call in that
// moment races with the update.
func KeepLoadTests(c *Client) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(keepAliveEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), keepAliveEvery)
			err := c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpLTPing, protocol.LoadTestRequest{}, nil)
			cancel()
			if err != nil {
				c.log.Debug("load-test grain not reached", "error", err)
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// LoadTestStart starts a run of spec (already validated, aimed at a test
// room). It fails with CodeConflict while another run is going on.
func (c *Client) LoadTestStart(ctx context.Context, spec loadtest.Spec) (*loadtest.Run, error) {
	var r loadtest.Run
	return &r, c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpLTStart, protocol.LoadTestRequest{Spec: spec}, &r)
}

// LoadTests returns up to limit runs older than run before ("" for the
// newest), newest first, without their series.
func (c *Client) LoadTests(ctx context.Context, limit int, before string) (*protocol.LoadTestPage, error) {
	var p protocol.LoadTestPage
	return &p, c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpLTList, protocol.LoadTestRequest{Limit: limit, Before: before}, &p)
}

// LoadTest returns run id with the per-second figures after second since
// (0 for all), those of a running test not yet in the log included.
func (c *Client) LoadTest(ctx context.Context, id string, since int) (*loadtest.Run, error) {
	var r loadtest.Run
	return &r, c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpLTGet, protocol.LoadTestRequest{ID: id, Since: since}, &r)
}

// LoadTestStop stops run id and answers once it has ended; an ended run is
// answered as it is.
func (c *Client) LoadTestStop(ctx context.Context, id string) (*loadtest.Run, error) {
	var r loadtest.Run
	return &r, c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpLTStop, protocol.LoadTestRequest{ID: id}, &r)
}

// ScheduleAdd records a schedule (cron and spec already validated).
func (c *Client) ScheduleAdd(ctx context.Context, sc loadtest.Schedule) (*loadtest.Schedule, error) {
	var r loadtest.Schedule
	return &r, c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpSchAdd, protocol.LoadTestRequest{Schedule: &sc}, &r)
}

// Schedules lists the schedules, oldest first.
func (c *Client) Schedules(ctx context.Context) ([]loadtest.Schedule, error) {
	var r []loadtest.Schedule
	return r, c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpSchList, protocol.LoadTestRequest{}, &r)
}

// ScheduleRemove deletes schedule id; CodeNotFound when unknown.
func (c *Client) ScheduleRemove(ctx context.Context, id string) error {
	return c.call(ctx, protocol.LoadTestsID, protocol.KindLoadTests, protocol.OpSchRemove, protocol.LoadTestRequest{ID: id}, nil)
}
