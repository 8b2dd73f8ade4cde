package node

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// gateLog holds every append while its gate is shut, as a log that stalls
// does: the room's writes queue up behind the one in flight. A fast fake
// beside the real broker tests.
type gateLog struct {
	persistence.Log
	shut atomic.Bool
	held chan struct{} // one value per append held
	open chan struct{} // closed to let the held appends through
}

func (l *gateLog) Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error) {
	if l.shut.Load() {
		l.held <- struct{}{}
		select {
		case <-l.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return l.Log.Append(ctx, stream, data...)
}

// A flood of bypass codes beyond the room's write queue is answered busy at
// once, while the log is stalled; the redemptions taken are all written
// once the log moves again: none is lost, none is counted twice.
func TestWriteQueueBound(t *testing.T) {
	const bound, extra = 3, 4
	l := &gateLog{Log: memlog.New(), held: make(chan struct{}, 1), open: make(chan struct{})}
	n := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l, WriteQueue: bound,
		WriteTimeout: 10 * time.Second}})
	stopNode(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cr := mustCreate(t, ctx, n, room.Config{Slug: "flood", Name: "Flood", RatePerMinute: 60, Active: true})
	id := cr.View.ID
	var code protocol.CodeInfo
	if err := n.Client.Admin(ctx, id, protocol.OpCodeAdd, protocol.AdminRequest{Actor: "admin", Label: "Press"}, &code); err != nil {
		t.Fatal(err)
	}

	// One request straight to the grain, without the client's retries: a
	// retried redemption would count twice.
	ask := func(op string, body any) *wire.Response {
		b, _ := json.Marshal(body)
		res, err := n.cluster.Request(id, protocol.KindRoom, &wire.Request{Op: op, Body: b}, cluster.WithTimeout(30*time.Second))
		if err != nil {
			t.Errorf("%s: %v", op, err)
			return &wire.Response{Code: "no answer"}
		}
		return res.(*wire.Response)
	}
	answers := make(chan *wire.Response, bound+extra+1)
	redeem := func() { answers <- ask(protocol.OpRedeem, protocol.RedeemRequest{Code: code.Code}) }

	l.shut.Store(true)
	go redeem()
	select {
	case <-l.held: // the first redemption is in flight
	case <-ctx.Done():
		t.Fatal("the first redemption never reached the log")
	}
	for range bound + extra {
		go redeem()
	}
	for busy := 0; busy < extra; {
		select {
		case r := <-answers:
			if r.Code != protocol.CodeBusy {
				t.Fatalf("while the log is stalled: got %q %s, want busy", r.Code, r.Message)
			}
			busy++
		case <-ctx.Done():
			t.Fatalf("%d busy answers, want %d", busy, extra)
		}
	}
	l.shut.Store(false)
	close(l.open)
	for range bound + 1 {
		if r := <-answers; r.Code != "" {
			t.Fatalf("a redemption taken: got %q %s, want a token", r.Code, r.Message)
		}
	}
	var codes []protocol.CodeInfo
	if err := n.Client.Admin(ctx, id, protocol.OpCodeList, protocol.AdminRequest{Actor: "admin"}, &codes); err != nil {
		t.Fatal(err)
	}
	if len(codes) != 1 || codes[0].Uses != bound+1 {
		t.Fatalf("codes after the flood: %+v, want one used %d times", codes, bound+1)
	}
}
