package beacon_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon"
	"github.com/aditus-queue/aditus-queue/actors/beacon/beacontest"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
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

// drand's unchained scheme on G2 (public key on G1, SHA-256(round) signed):
// real rounds of drand's unchained testnet, recorded in drand's and
// drand-verify's tests.
func TestUnchainedRounds(t *testing.T) {
	pk, _ := hex.DecodeString("8200fc249deb0148eb918d6e213980c5d01acd7fc251900d9260136da3b54836ce125172399ddc69c4e3e11429b62c11")
	chain := &room.Chain{PublicKey: pk, Scheme: beacon.SchemeUnchained}
	for _, r := range []struct {
		round uint64
		sig   string
	}{
		{7601003, "af7eac5897b72401c0f248a26b612c5ef68e0ff830b4d78927988c89b5db3e997bfcdb7c24cb19f549830cd02cb854a1143fd53a1d4e0713ded471260869439060d170a77187eb6371742840e43eccfa225657c4cc2d9619f7c3d680470c9743"},
		{223344, "94f6b85df7cce7237e8e7df66d794ddad092de5d8bb6a791b97e905aa89852e506ac36a792eba7021e22eebf34891f8914bf9a8dd9233ea0a4c5ca00ef8404999f899073dd2eade61fe54077fee8168f83dcb61a758b6883b38904054e64a433"},
	} {
		sig, _ := hex.DecodeString(r.sig)
		sum := sha256.Sum256(sig)
		b := room.BeaconRound{Round: r.round, Signature: sig, Randomness: sum[:]}
		if err := beacon.Verify(chain, &b); err != nil {
			t.Errorf("round %d: %v", r.round, err)
		}
		b.Round++
		if err := beacon.Verify(chain, &b); err == nil {
			t.Errorf("round %d verified as round %d", r.round, b.Round)
		}
	}
}

// A relay that cannot be reached when the node starts does not stop it:
// Dial returns a client without a chain (rounds answer ErrNoChain), which
// reads the chain once the relay comes up. A relay that answers that the
// chain is not there is an error at once.
func TestDialRelayDownThenUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a closed port: connections are refused
	quick := beacontest.Chains()[1].Info
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cl, err := beacon.Dial(context.Background(), "http://"+addr+"/"+quick.Hash, beacon.Backoff{Min: 10 * time.Millisecond, Max: 100 * time.Millisecond}, log)
	if err != nil {
		t.Fatalf("dial with the relay down: %v, want a client", err)
	}
	defer cl.Close()
	if cl.Chain() != nil {
		t.Fatal("a chain without a relay")
	}
	if _, err := cl.Wait(context.Background(), 1); !errors.Is(err, beacon.ErrNoChain) {
		t.Fatalf("wait without the chain: %v, want ErrNoChain", err)
	}
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	srv := beacontest.StartOn(t, ln)
	testwait.UntilEvery(t, 10*time.Second, 10*time.Millisecond, "the chain read once the relay is up", func() bool { return cl.Chain() != nil })
	if got := hex.EncodeToString(cl.Chain().Hash); got != quick.Hash {
		t.Fatalf("chain %s, want %s", got, quick.Hash)
	}
	if _, err := beacon.Dial(context.Background(), srv.URL+"/unknown", beacon.DefaultBackoff, log); err == nil {
		t.Fatal("a relay without the chain: no error")
	}
}
