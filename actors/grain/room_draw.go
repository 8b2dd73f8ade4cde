package grain

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// BeaconSource gives committed draws their public randomness: the chain
// named in commitments, and a round of it, verified, waited for until ctx
// ends. actors/beacon.Client is the real one.
type BeaconSource interface {
	Chain() *room.Chain
	Wait(ctx context.Context, round uint64) (room.BeaconRound, error)
}

// defaultBeaconWait is how long a draw waits for its round past the
// round's due time before it is made with the key alone.
const defaultBeaconWait = 30 * time.Second

// drawKeyAD is the associated data sealing room id's draw key.
func drawKeyAD(id string) []byte { return []byte("room:" + id + ":draw") }

// newDrawKey draws a fresh key for a draw that configuration may arm, with
// its sealed form and the beacon chain to name.
func (g *roomGrain) newDrawKey() room.DrawKey {
	k := protocol.RandomBytes(room.DrawKeySize)
	dk := room.DrawKey{Key: k, Sealed: g.deps.Sealer.Seal(k, drawKeyAD(g.id))}
	if g.deps.Beacon != nil {
		dk.Chain = g.deps.Beacon.Chain()
	}
	return dk
}

// drawer steps a due draw through its writes: close the pre-queue, wait
// for the beacon round, draw. It lives in the grain; only the wait runs
// apart, in one goroutine it owns.
type drawer struct {
	wait      *beaconWait
	keyFailed bool
}

// beaconWait is one wait for a round; done is closed when it has ended.
type beaconWait struct {
	round  uint64
	cancel context.CancelFunc
	done   chan struct{}
	got    room.BeaconRound
	err    error
}

// stop ends the wait, if any, and waits for its goroutine.
func (d *drawer) stop() {
	if d.wait != nil {
		d.wait.cancel()
		<-d.wait.done
		d.wait = nil
	}
}

// drawIfDue moves a due draw one step on: each tick queues at most one
// write, and none while one is under way.
func (g *roomGrain) drawIfDue(now time.Time) {
	if g.writes.writing {
		return
	}
	c, ok := g.st.DrawPending(now.UnixNano())
	if !ok {
		g.openUncommitted(now)
		return
	}
	key, err := g.deps.Sealer.Open(g.st.DrawKeySealed, drawKeyAD(g.id))
	if err != nil {
		if !g.draw.keyFailed {
			g.log.Error("cannot open the draw key (wrong master key?); the draw waits", "error", err)
			g.draw.keyFailed = true
		}
		return
	}
	if c.Chain != nil && g.st.Armed.Closed == nil {
		g.queueTask("close", func(now int64) ([]room.Event, error) { return g.st.DecideClose(now), nil })
		return
	}
	in := room.DrawInput{Key: key}
	if c.Chain != nil {
		var ready bool
		if in, ready = g.beaconInput(c); !ready {
			return
		}
		in.Key = key
	}
	g.queueTask("draw", func(now int64) ([]room.Event, error) { return g.st.DecideDraw(now, in) })
}

// beaconInput starts the wait for c's round, or returns its outcome once
// it has ended: the verified round, or the reason the draw goes without.
func (g *roomGrain) beaconInput(c *room.Commitment) (room.DrawInput, bool) {
	src := g.deps.Beacon
	switch {
	case src == nil:
		return room.DrawInput{BeaconMissing: "the node that made the draw had no beacon configured"}, true
	case src.Chain() == nil:
		return room.DrawInput{BeaconMissing: "the node that made the draw could not reach its beacon's relay to read the chain"}, true
	case string(src.Chain().Hash) != string(c.Chain.Hash):
		return room.DrawInput{BeaconMissing: "the node that made the draw reads another beacon chain than the committed one"}, true
	}
	w := g.draw.wait
	if w == nil || w.round != c.Round {
		g.draw.stop()
		wait := g.deps.BeaconWait
		if wait <= 0 {
			wait = defaultBeaconWait
		}
		deadline := c.Chain.RoundTime(c.Round)
		if t := time.Now(); deadline.Before(t) {
			deadline = t
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(wait))
		w = &beaconWait{round: c.Round, cancel: cancel, done: make(chan struct{})}
		g.draw.wait = w
		go func() {
			defer close(w.done)
			w.got, w.err = src.Wait(ctx, w.round)
		}()
		return room.DrawInput{}, false
	}
	select {
	case <-w.done:
	default:
		return room.DrawInput{}, false
	}
	if w.err != nil {
		g.log.Warn("beacon round not had in time; the draw uses the key alone", "round", w.round, "error", w.err)
		return room.DrawInput{BeaconMissing: fmt.Sprintf("round %d of the beacon could not be had and verified in time", w.round)}, true
	}
	g.log.Info("beacon round verified", "round", w.got.Round, "randomness", hex.EncodeToString(w.got.Randomness))
	got := w.got
	return room.DrawInput{Beacon: &got}, true
}

// openUncommitted makes a draw armed before draws were committed, with a
// fresh key, as such rooms always did.
func (g *roomGrain) openUncommitted(now time.Time) {
	if due, ok := g.st.OpeningDue(); ok && !now.Before(due) {
		key := protocol.RandomBytes(16)
		g.queueTask("open", func(now int64) ([]room.Event, error) { return g.st.DecideOpen(now, key), nil })
	}
}

// queueTask queues one of the draw's writes.
func (g *roomGrain) queueTask(kind string, decide func(now int64) ([]room.Event, error)) {
	g.writes.add(&task{kind: kind, decide: decide, done: func(err error) {
		if err != nil {
			g.log.Warn("draw step failed", "step", kind, "error", err)
		}
		if kind == "draw" && err == nil {
			g.draw.stop()
		}
	}})
}
