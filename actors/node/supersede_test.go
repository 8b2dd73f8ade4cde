package node

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A join waiting for a reservation when a newer activation of its room
// writes its marker (the room moving to another member) is not refused
// log_unavailable: the log is fine. The front retries it, and the room's
// next activation answers it a number.
func TestJoinWaitingWhenSupersededIsRetried(t *testing.T) {
	mem := memlog.New()
	l := &gateLog{Log: mem, held: make(chan struct{}, 16), open: make(chan struct{})}
	n, err := Start(Config{Member: true, Deps: Deps{Log: l, Sealer: sealer, Hash: hash, WriteTimeout: 10 * time.Second,
		Logger: startNodeLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	stopNode(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cr, err := n.Client.Create(ctx, room.Config{Slug: "moving", Name: "Moving", RatePerMinute: 6000, Active: true}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	id := cr.View.ID

	l.shut.Store(true)
	type joinRes struct {
		j   *JoinResult
		err error
	}
	done := make(chan joinRes, 1)
	go func() {
		j, err := n.Client.Join(ctx, id)
		done <- joinRes{j, err}
	}()
	select {
	case <-l.held: // the join's reservation is on its way to the log
	case <-ctx.Done():
		t.Fatal("the join's reservation never reached the log")
	}
	// Another activation takes the room meanwhile.
	var marker activatedRecord
	marker.V, marker.Type, marker.At = 1, "activated", time.Now().UnixNano()
	marker.Activated.Nonce = "elsewhere"
	b, _ := json.Marshal(marker)
	if _, err := mem.Append(ctx, id, b); err != nil {
		t.Fatal(err)
	}
	l.shut.Store(false)
	close(l.open)

	r := <-done
	if r.err != nil {
		t.Fatalf("join waiting when its activation was superseded: %v, want a number", r.err)
	}
	if r.j.Number == 0 {
		t.Fatalf("join answered number 0")
	}
}

// Batches waiting for the first reservation of an activation are given
// firstBlockWait before the log counts as down (a member just started, as
// in a roll, writes its first block slowly); once a reservation has been
// written, blockWait applies.
func TestFirstReservationIsGivenLonger(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	g := &roomGrain{log: startNodeLogger()}
	wait := func() {
		g.desk.waiting = []batchWaiter{{since: t0, req: JoinBatchRequest{Count: 1}}}
		g.desk.logDown = false
	}

	wait()
	g.checkBlockWait(t0.Add(blockWait + 100*time.Millisecond))
	if g.desk.logDown || len(g.desk.waiting) != 1 {
		t.Fatalf("before the first reservation, %v of waiting took the log for down", blockWait+100*time.Millisecond)
	}
	g.checkBlockWait(t0.Add(firstBlockWait + 100*time.Millisecond))
	if !g.desk.logDown || len(g.desk.waiting) != 0 {
		t.Fatalf("before the first reservation, %v of waiting left the log up", firstBlockWait+100*time.Millisecond)
	}

	g.desk.logDown = false
	g.grantBatches(nil) // a reservation written, nothing waiting
	wait()
	g.checkBlockWait(t0.Add(blockWait + 100*time.Millisecond))
	if !g.desk.logDown || len(g.desk.waiting) != 0 {
		t.Fatalf("after a reservation, %v of waiting left the log up", blockWait+100*time.Millisecond)
	}
}
