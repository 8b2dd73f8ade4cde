package beacon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon"
	"github.com/aditus-queue/aditus-queue/actors/beacon/beacontest"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Every recorded round of both real chains verifies under its chain's key,
// and each chain's description hashes to its chain hash.
func TestRecordedRoundsVerify(t *testing.T) {
	for _, c := range beacontest.Chains() {
		chain, err := c.Info.Chain()
		if err != nil {
			t.Fatalf("%s: %v", c.Info.Metadata.BeaconID, err)
		}
		for _, r := range c.Rounds {
			b, err := r.Decode()
			if err != nil {
				t.Fatal(err)
			}
			if err := beacon.Verify(chain, &b); err != nil {
				t.Errorf("%s round %d: %v", chain.Scheme, r.Round, err)
			}
		}
	}
}

// A changed round number, signature, previous signature or randomness, or
// another chain's key, fails.
func TestTamperedRoundsFail(t *testing.T) {
	chains := beacontest.Chains()
	def, _ := chains[0].Info.Chain()
	quick, _ := chains[1].Info.Chain()
	pick := func(c beacontest.Chain, i int) room.BeaconRound {
		b, err := c.Rounds[i].Decode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	other := pick(chains[0], 0) // a valid G2 point that signs something else
	for _, tc := range []struct {
		name  string
		chain *room.Chain
		round func() room.BeaconRound
	}{
		{"default: round", def, func() room.BeaconRound { b := pick(chains[0], 2); b.Round++; return b }},
		{"default: previous signature", def, func() room.BeaconRound {
			b := pick(chains[0], 2)
			b.PreviousSignature = append([]byte(nil), b.PreviousSignature...)
			b.PreviousSignature[5] ^= 1
			return b
		}},
		{"default: another round's signature", def, func() room.BeaconRound {
			b := pick(chains[0], 2)
			b.Signature, b.Randomness = other.Signature, other.Randomness
			return b
		}},
		{"default: randomness", def, func() room.BeaconRound {
			b := pick(chains[0], 2)
			b.Randomness = append([]byte(nil), b.Randomness...)
			b.Randomness[0] ^= 1
			return b
		}},
		{"quicknet: round", quick, func() room.BeaconRound { b := pick(chains[1], 0); b.Round--; return b }},
		{"quicknet: signature not on the curve", quick, func() room.BeaconRound {
			b := pick(chains[1], 0)
			b.Signature = append([]byte(nil), b.Signature...)
			b.Signature[20] ^= 1
			return b
		}},
		{"quicknet round under the default key", def, func() room.BeaconRound { return pick(chains[1], 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.round()
			if err := beacon.Verify(tc.chain, &b); err == nil {
				t.Fatal("verified")
			}
		})
	}
	tampered := chains[1].Info
	tampered.Period = 4
	if _, err := tampered.Chain(); !errors.Is(err, beacon.ErrChainHash) {
		t.Fatalf("a description that does not hash to its chain hash: got %v, want ErrChainHash", err)
	}
}

// The client reads the chain and rounds from a local server that serves the
// recorded rounds, and gives up on a round that never comes when its
// context ends.
func TestClient(t *testing.T) {
	srv := beacontest.Start(t)
	ctx := context.Background()
	for _, c := range beacontest.Chains() {
		cl, err := beacon.Open(ctx, srv.ChainURL(c.Info.Hash))
		if err != nil {
			t.Fatal(err)
		}
		last := c.Rounds[len(c.Rounds)-1]
		b, err := cl.Wait(ctx, last.Round)
		if err != nil || b.Round != last.Round {
			t.Fatalf("%s: round %d: got %+v, %v", cl.Chain().Scheme, last.Round, b, err)
		}
	}
	quick := beacontest.Chains()[1]
	cl, err := beacon.Open(ctx, srv.ChainURL(quick.Info.Hash))
	if err != nil {
		t.Fatal(err)
	}
	n := quick.Rounds[0].Round
	srv.Hide(n, true)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := cl.Wait(short, n); err == nil {
		t.Fatal("an unpublished round was had")
	}
	bad := quick.Rounds[0]
	bad.Signature = beacontest.Chains()[0].Rounds[0].Signature
	srv.Hide(n, false)
	srv.Put(quick.Info.Hash, bad)
	if _, err := cl.Fetch(ctx, n); err == nil {
		t.Fatal("a round with a wrong signature was accepted")
	}
	if _, err := beacon.Open(ctx, srv.URL+"/unknown"); err == nil {
		t.Fatal("opened a chain the server does not serve")
	}
	if _, err := beacon.Open(ctx, "ftp://example.org/x"); err == nil {
		t.Fatal("opened a non-HTTP URL")
	}
}
