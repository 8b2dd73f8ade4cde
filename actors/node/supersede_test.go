package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
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
	n := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l, WriteTimeout: 10 * time.Second}})
	stopNode(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cr := mustCreate(t, ctx, n, room.Config{Slug: "moving", Name: "Moving", RatePerMinute: 6000, Active: true})
	id := cr.View.ID

	l.shut.Store(true)
	type joinRes struct {
		j   *protocol.JoinResult
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
	// (the journal's activation marker, as it is stored)
	b := fmt.Appendf(nil, `{"v":1,"type":"activated","at":%d,"activated":{"nonce":"elsewhere"}}`, time.Now().UnixNano())
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
