package node

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// sealer is the real cipher under a fixed test key.
var sealer, _ = seal.NewSealer(make([]byte, seal.KeySize))

func hash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func startNode(t *testing.T, l persistence.Log) *Node {
	t.Helper()
	return mustStart(t, Config{Member: true, Deps: grain.Deps{Log: l}})
}

func TestRoomLifecycleOnOneMember(t *testing.T) {
	l := memlog.New()
	n := startNode(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cfg := room.Config{Slug: "spring-sale", Name: "Spring sale", TargetURL: "https://shop.example.com/", RatePerMinute: 60, Active: true}
	cr := mustCreate(t, ctx, n, cfg)
	if cr.Secret == "" || !cr.View.Exists {
		t.Fatalf("create: %+v", cr)
	}
	if _, err := n.Client.Create(ctx, cfg, "admin"); !protocol.IsCode(err, protocol.CodeConflict) {
		t.Fatalf("second create of the slug: got %v, want conflict", err)
	}
	id := cr.View.ID
	r, ok, err := n.Views.BySlug(ctx, "spring-sale")
	if err != nil || !ok || r.View.ID != id {
		t.Fatalf("BySlug: %v %v %v", r, ok, err)
	}
	var last uint64
	for i := 0; i < 200; i++ {
		j, err := n.Client.Join(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Number <= last {
			t.Fatalf("number %d after %d", j.Number, last)
		}
		last = j.Number
		if got, err := room.ParseTicket(r.TicketKey, id, j.Ticket); err != nil || got != j.Number {
			t.Fatalf("ticket of %d does not parse on the front: %d %v", j.Number, got, err)
		}
	}
	// The first join of a quiet room is admitted at once; its token verifies
	// with the secret shown at creation.
	tok, err := n.Client.Token(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := token.Verify([]byte(cr.Secret), "spring-sale", tok.Token, time.Now()); err != nil {
		t.Fatalf("token does not verify with the creation secret: %v", err)
	}
	if _, err := n.Client.Token(ctx, id, 200); !protocol.IsCode(err, protocol.CodeTooEarly) {
		t.Fatalf("token of number 200 at 60/min: got %v, want too early", err)
	}
	if _, err := n.Client.Token(ctx, id, 10_000); !protocol.IsCode(err, protocol.CodeNotIssued) {
		t.Fatalf("token of a number never issued: got %v, want not issued", err)
	}

	// Pause through configure: joins answer paused.
	cfg.Active = false
	var v room.View
	if err := n.Client.Admin(ctx, id, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &cfg}, &v); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Client.Join(ctx, id); !protocol.IsCode(err, protocol.CodePaused) {
		t.Fatalf("join while paused: got %v", err)
	}
	cfg.Active = true
	if err := n.Client.Admin(ctx, id, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &cfg}, &v); err != nil {
		t.Fatal(err)
	}
	bad := cfg
	bad.RatePerMinute = 0
	err = n.Client.Admin(ctx, id, protocol.OpConfigure, protocol.AdminRequest{Actor: "admin", Config: &bad}, &v)
	var ge *protocol.Error
	if !errors.As(err, &ge) || ge.Code != protocol.CodeInvalid || ge.Field != "ratePerMinute" {
		t.Fatalf("invalid rate: got %v", err)
	}

	// Restart on the same log: numbers continue above everything issued.
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	n.Stop(stopCtx)
	stopCancel()
	n2 := startNode(t, l)
	defer n2.Stop(context.Background())
	j, err := n2.Client.Join(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Number <= last {
		t.Fatalf("after restart got number %d, want above %d", j.Number, last)
	}
	if j.Number != last+1 {
		t.Logf("after a graceful restart number %d follows %d (gap of %d)", j.Number, last, j.Number-last-1)
	}
}

func TestUnavailableLogAnswersUnavailable(t *testing.T) {
	l := memlog.New()
	n := startNode(t, l)
	defer n.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr := mustCreate(t, ctx, n, room.Config{Slug: "outage", Name: "Outage", RatePerMinute: 6000, Active: true})
	l.SetDown(true)
	var seen bool
	for i := 0; i < 200; i++ {
		cctx, c := context.WithTimeout(ctx, time.Second)
		_, err := n.Client.Join(cctx, cr.View.ID)
		c()
		if err != nil {
			// The distinct code of a log that cannot be written, answered
			// at once (joinbatch.go).
			if !protocol.IsCode(err, protocol.CodeLogUnavailable) {
				t.Fatalf("join during outage: got %v, want log_unavailable", err)
			}
			seen = true
			break
		}
	}
	if !seen {
		t.Fatal("joins never failed while the log was down")
	}
	l.SetDown(false)
	eventually(t, 10*time.Second, "joins to resume after the log came back", func() bool {
		_, err := n.Client.Join(ctx, cr.View.ID)
		return err == nil
	})
}
