package node

import (
	"context"
	"time"
)

// A graceful stop hands the member's rooms over before its grains stop.
// protoactor's own graceful shutdown stops the actors first and tells the
// others last (they drop the member only when its health checks fail, up
// to a round later), so every call that reached the member meanwhile,
// joins included, waited out its attempt. Instead the member first answers
// its health checks 503: within a round every peer and every front drops it
// from its member list and places its rooms elsewhere (the new activation
// reads the log and fences this one off), while this member's grains still
// answer the calls already on their way. Only then does it shut down.

// handoverRounds is how many provider rounds the member waits for the
// others to drop it: one round to see the 503, one for the slowest poller
// whose round had just begun.
const handoverRounds = 2

// handoverFloor is the least the member waits: a round takes as long as its
// slowest health check, up to the provider's 2 s timeout, however short the
// pause between rounds.
const handoverFloor = 2 * time.Second

// leave makes the member's health answer 503 and waits until the others
// have dropped it, or ctx ends. A member alone has nobody to hand over to.
func (n *Node) leave(ctx context.Context) {
	if !n.cfg.Member || len(n.cfg.Peers) < 2 {
		return
	}
	n.leaving.Store(true)
	t := time.NewTimer(max(handoverRounds*n.cfg.TTL, handoverFloor) + 500*time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
