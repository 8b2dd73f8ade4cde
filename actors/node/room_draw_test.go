package node

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon/beacontest"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// lostBeacon is a beacon source whose chain can be lost: a node whose relay
// cannot be reached has none.
type lostBeacon struct{ chain atomic.Pointer[room.Chain] }

func (b *lostBeacon) Chain() *room.Chain { return b.chain.Load() }

func (b *lostBeacon) Wait(context.Context, uint64) (room.BeaconRound, error) {
	return room.BeaconRound{}, errors.New("no round in this test")
}

// A draw committed to a beacon round, made by a node that has no chain
// (its relay could not be reached since it started), is made at once with
// the key alone and says why.
func TestDrawWithoutTheChain(t *testing.T) {
	chain, err := beacontest.Chains()[1].Info.Chain()
	if err != nil {
		t.Fatal(err)
	}
	src := &lostBeacon{}
	src.chain.Store(chain)
	n := mustStart(t, Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Beacon: src}})
	stopNode(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opens := time.Now().Add(2 * time.Second)
	cr := mustCreate(t, ctx, n, room.Config{Slug: "lost", Name: "Lost", RatePerMinute: 60, Active: true, OpensAt: &opens})
	if cr.View.Armed == nil || cr.View.Armed.Commit == nil || cr.View.Armed.Commit.Chain == nil {
		t.Fatalf("the draw commits no beacon round: %+v", cr.View.Armed)
	}
	src.chain.Store(nil)
	for {
		var v room.View
		if err := n.Client.Admin(ctx, cr.View.ID, protocol.OpGet, protocol.AdminRequest{Actor: "admin"}, &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Draws) > 0 {
			if got := v.Draws[0].BeaconMissing; !strings.Contains(got, "could not reach its beacon") {
				t.Fatalf("beaconMissing %q, want the reason", got)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("no draw within a minute of the opening")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
