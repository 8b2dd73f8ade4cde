package grain

import (
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// Batches waiting for the first reservation of an activation are given
// firstBlockWait before the log counts as down (a member just started, as
// in a roll, writes its first block slowly); once a reservation has been
// written, blockWait applies.
func TestFirstReservationIsGivenLonger(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	g := &roomGrain{log: quietLogger()}
	wait := func() {
		g.desk.waiting = []batchWaiter{{since: t0, req: protocol.JoinBatchRequest{Count: 1}}}
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
