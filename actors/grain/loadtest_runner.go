package grain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/loadtest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/bench/load"
)

// launch starts the runner of run on this node. The goroutine is owned by
// the grain: it reports every second and its end as local messages, and
// shutdown cancels it and waits for it.
func (g *loadTestGrain) launch(run *loadtest.Run) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &activeRun{id: run.ID, cancel: cancel, done: make(chan struct{})}
	g.cur = a
	sys, self, base, spec := g.sys, g.self, g.deps.LoadTests.BaseURL, run.Spec
	go func() {
		defer close(a.done)
		defer cancel()
		res, err := runLoad(ctx, sys, base, spec, func(s load.Second) {
			sys.Root.Send(self, &ltSecond{id: a.id, sec: s, at: time.Now()})
		})
		sys.Root.Send(self, &ltDone{id: a.id, res: res, err: err})
	}()
}

// errNotTestRoom ends a run whose room is gone or no longer a test room.
var errNotTestRoom = errors.New("the room is gone or is no longer a test room; load tests aim at test rooms only")

// runLoad checks that spec's room is still a test room, then drives it
// through base with bench/load's open loop: the requests go over HTTP to
// the node's public URL, as a visitor's do.
func runLoad(ctx context.Context, sys *actor.ActorSystem, base string, spec loadtest.Spec, onSecond func(load.Second)) (load.Result, error) {
	slug, err := testRoomSlug(ctx, sys, spec.SiteID)
	if err != nil {
		return load.Result{}, err
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return load.Result{}, fmt.Errorf("public URL %q is not usable", base)
	}
	duration := time.Duration(spec.DurationSeconds) * time.Second
	maxReq := min(int(math.Ceil(spec.RatePerSecond*float64(spec.DurationSeconds)))+1, load.MaxRequestsCap)
	conns := min(max(int(spec.RatePerSecond/10), 8), 256)
	client := load.NewClient(conns, load.DefaultTimeout)
	defer client.CloseIdleConnections()
	t := load.NewTarget(client, u, slug)
	defer t.Close()
	return load.Run(ctx, t, load.Config{
		Profile: load.Profile(spec.Profile), Rate: spec.RatePerSecond, Duration: duration,
		MaxRequests: maxReq, MaxInFlight: load.DefaultMaxInFlight, Mix: load.DefaultMix, OnSecond: onSecond,
	})
}

// testRoomSlug asks room id's grain for its configuration and returns its
// slug when it is a live test room.
func testRoomSlug(ctx context.Context, sys *actor.ActorSystem, id string) (string, error) {
	body, _ := json.Marshal(protocol.AdminRequest{Actor: "loadtest"})
	for attempt := 0; ; attempt++ {
		res, err := cluster.GetCluster(sys).Request(id, protocol.KindRoom, &wire.Request{Op: protocol.OpGet, Body: body}, cluster.WithTimeout(5*time.Second))
		if err == nil {
			r, ok := res.(*wire.Response)
			if !ok || r.Code != "" {
				return "", errNotTestRoom
			}
			var v room.View
			if err := json.Unmarshal(r.Body, &v); err != nil || !v.Exists || v.Deleted || !v.Config.Test || v.Config.Slug == "" {
				return "", errNotTestRoom
			}
			return v.Config.Slug, nil
		}
		if attempt == 2 || ctx.Err() != nil {
			return "", fmt.Errorf("the room did not answer: %w", err)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
