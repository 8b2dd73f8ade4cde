package room_test

import (
	"math"
	"testing"
)

// A room restored from a backup hands out no number the lost node may have
// handed out after the backup, and the gap costs the new visitors no wait.
func TestJumpAfterRestore(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 100)
	for i := 0; i < 250; i++ {
		g.mustJoin(at(int64(i) * 10 * ms))
	}
	g.snapshot()
	backupAt := at(3 * second)
	image := &memLog{recs: append([][]byte(nil), g.log.recs...), snap: g.log.snap, snapOff: g.log.snapOff, durable: g.log.durable}

	// The lost node goes on at 100 joins a second for ten seconds.
	var last uint64
	for i := 0; i < 1000; i++ {
		last = g.mustJoin(backupAt + int64(i)*10*ms)
	}

	restoreAt := backupAt + 10*second
	r := activate(t, image, g.id, restoreAt, 100)
	upTo := r.st.JumpAfterRestore(float64(restoreAt-backupAt)/float64(second), 100)
	if upTo < last {
		t.Fatalf("jump to %d, below %d handed out by the lost node", upTo, last)
	}
	r.must(r.st.DecideJump(upTo, restoreAt))
	r = r.crash(restoreAt + second)
	n := r.mustJoin(restoreAt + second)
	if n <= last || n <= upTo {
		t.Fatalf("first number after the restore %d, want above %d (lost node) and %d (jump)", n, last, upTo)
	}
	if s := r.st.View.Serving(restoreAt + second); s < upTo {
		t.Fatalf("serving %d after the restore, want the gap up to %d admitted", s, upTo)
	}
	if s := r.st.View.Serving(restoreAt + second); float64(n)-float64(s) > r.st.Config.Burst()+10 {
		t.Fatalf("number %d waits behind %d", n, n-s)
	}
}

func TestJumpAfterRestoreBounds(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 100)
	g.mustJoin(at(0))
	for _, tc := range []struct {
		elapsed, rate float64
		want          uint64
	}{
		{0, 1e6, 100},
		{-5, 1e6, 100}, // a clock behind the backup jumps nothing back
		{1.5, 10, 115},
		{1e300, 1e6, math.MaxUint64},
	} {
		if got := g.st.JumpAfterRestore(tc.elapsed, tc.rate); got != tc.want {
			t.Errorf("JumpAfterRestore(%v, %v): got %d, want %d", tc.elapsed, tc.rate, got, tc.want)
		}
	}
}
