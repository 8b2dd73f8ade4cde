package room_test

import (
	"errors"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func withMode(cfg room.Config, mode string) room.Config {
	cfg.Mode = mode
	return cfg
}

// TestSoldOutThenQueueKeepsOrder: a sold-out room refuses joins and
// admissions and keeps its line where it stood; back in queue, the same
// numbers are admitted in the same order at the rate, and new arrivals
// come after them.
func TestSoldOutThenQueueKeepsOrder(t *testing.T) {
	for _, closed := range []string{room.ModeSoldOut, room.ModeMaintenance} {
		t.Run(closed, func(t *testing.T) {
			g := newRoom(t, baseConfig(), at(0), 64) // 600/min, burst 50
			for range 200 {
				g.mustJoin(at(0))
			}
			stop := at(10 * second) // serving 50 + 100
			before := g.st.Serving(stop)
			g.configure(withMode(baseConfig(), closed), stop)
			want := room.ErrSoldOut
			if closed == room.ModeMaintenance {
				want = room.ErrMaintenance
			}
			if _, err := g.join(at(20 * second)); !errors.Is(err, want) {
				t.Fatalf("join while %s: got %v, want %v", closed, err, want)
			}
			if _, err := g.st.Admit(1, at(20*second)); !errors.Is(err, want) {
				t.Fatalf("admit while %s: got %v, want %v", closed, err, want)
			}
			if got := g.st.Serving(at(hour)); got != before {
				t.Fatalf("serving while %s: got %d, want it frozen at %d", closed, got, before)
			}
			g = g.crash(at(hour)) // the mode and the line survive a recovery
			resume := at(hour + second)
			g.configure(baseConfig(), resume)
			if got := g.st.Serving(resume); got != before {
				t.Fatalf("serving on return to queue: got %d, want %d", got, before)
			}
			if got := g.st.Serving(resume + 5*second); got != before+50 {
				t.Fatalf("serving 5 s after the return: got %d, want %d at the rate", got, before+50)
			}
			if st := g.st.StatusOf(before+1, resume); st.Admitted || st.Ahead != 0 {
				t.Fatalf("first waiting number on return: got %+v, want next in line", st)
			}
			n := g.mustJoin(resume)
			if n <= 200 {
				t.Fatalf("number after the return: got %d, want above the 200 issued", n)
			}
			if st := g.st.StatusOf(n, resume); st.Ahead != n-before-1 {
				t.Fatalf("new arrival: got %d ahead, want %d", st.Ahead, n-before-1)
			}
		})
	}
}

// TestQueueAllNumbersButAdmitsNobody: the emergency stop still hands out
// numbers (a pause answers ErrPaused), admits nobody, not even a quiet
// room's burst, and resumes at the rate from where the line stopped (then
// a quiet room regains its burst above the issued count).
func TestQueueAllNumbersButAdmitsNobody(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 64)
	for range 10 {
		g.mustJoin(at(0)) // all admitted by the burst of 50
	}
	stop := at(second)
	g.configure(withMode(baseConfig(), room.ModeQueueAll), stop)
	if got := g.st.Serving(stop); got != 10 {
		t.Fatalf("serving at the stop: got %d, want the 10 issued (no burst kept)", got)
	}
	for i := range 100 {
		n := g.mustJoin(stop + int64(i)*second)
		if st := g.st.StatusOf(n, stop+int64(i)*second); st.Admitted || st.Mode != room.ModeQueueAll {
			t.Fatalf("number %d during the stop: got %+v, want waiting in queueAll", n, st)
		}
	}
	if _, err := g.st.Admit(11, at(hour)); !errors.Is(err, room.ErrTooEarly) {
		t.Fatalf("admit during the stop: got %v, want ErrTooEarly", err)
	}
	if _, err := g.st.Admit(10, at(hour)); err != nil {
		t.Fatalf("admit a number admitted before the stop: %v", err)
	}
	resume := at(hour)
	g.configure(baseConfig(), resume)
	for _, tc := range []struct {
		after int64
		want  uint64
	}{{0, 10}, {second, 20}, {5 * second, 60}, {10 * second, 110}, {hour, 160}} {
		if got := g.st.Serving(resume + tc.after); got != tc.want {
			t.Fatalf("serving %v after the resume: got %d, want %d", tc.after, got, tc.want)
		}
	}
}

// TestPassthroughAdmitsEveryJoin: every number is admitted as it is issued
// and stays admitted after the room goes back to queue, whose line starts
// at the issued count.
func TestPassthroughAdmitsEveryJoin(t *testing.T) {
	cfg := baseConfig()
	cfg.RatePerMinute = 60 // burst 5
	g := newRoom(t, withMode(cfg, room.ModePassthrough), at(0), 64)
	for i := range 500 {
		n := g.mustJoin(at(int64(i) * ms))
		if st, err := g.st.Admit(n, at(int64(i)*ms)); err != nil || !st.Admitted {
			t.Fatalf("number %d in passthrough: got %+v %v, want admitted", n, st, err)
		}
	}
	back := at(second)
	g.configure(cfg, back)
	if got := g.st.Serving(back); got != 500 {
		t.Fatalf("serving on leaving passthrough: got %d, want 500", got)
	}
	g = g.crash(back)
	if st := g.st.StatusOf(500, back); !st.Admitted {
		t.Fatalf("number 500 after recovery: got %+v, want admitted", st)
	}
	n := g.mustJoin(back)
	if st := g.st.StatusOf(n, back); st.Admitted {
		t.Fatalf("number %d in queue just after a recovery: got %+v, want it waiting for the rate", n, st)
	}
}

// TestPassthroughKeepsThePreQueue: before a scheduled opening the draw
// decides the order, whatever the mode.
func TestPassthroughKeepsThePreQueue(t *testing.T) {
	cfg := withMode(baseConfig(), room.ModePassthrough)
	cfg.OpensAt = timeAt(hour)
	g := newRoom(t, cfg, at(0), 64)
	n := g.mustJoin(at(second))
	if st := g.st.StatusOf(n, at(second)); st.Admitted {
		t.Fatalf("pre-queue number in passthrough: got %+v, want waiting for the draw", st)
	}
}

// TestModeChangeIsAudited: a change of mode is a configured event in the
// log and a set-mode entry of the audit trail, and survives replay.
func TestModeChangeIsAudited(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 64)
	g.configure(withMode(baseConfig(), room.ModeSoldOut), at(second))
	g.configure(withMode(baseConfig(), room.ModeSoldOut), at(2*second))
	g = g.crash(at(3 * second))
	var modes []string
	for _, a := range g.st.Audit {
		if a.Action == "set-mode" {
			modes = append(modes, a.Detail)
		}
	}
	if len(modes) != 1 || modes[0] != "queue → soldOut" {
		t.Fatalf("set-mode entries: got %q, want one \"queue → soldOut\"", modes)
	}
	if g.st.EffectiveMode() != room.ModeSoldOut {
		t.Fatalf("mode after replay: got %q", g.st.EffectiveMode())
	}
}

// TestClosedModesRefuseBypassCodes: a code redeems nothing in a closed room.
func TestClosedModesRefuseBypassCodes(t *testing.T) {
	g := newRoom(t, withMode(baseConfig(), room.ModeMaintenance), at(0), 64)
	if _, _, err := g.st.DecideRedeem([]byte("h"), at(0)); !errors.Is(err, room.ErrNoCode) {
		t.Fatalf("redeem in maintenance: got %v, want ErrNoCode", err)
	}
}

// TestOlderRoomsAreInQueueMode: a room configured before modes existed
// (no mode in its log) runs as queue.
func TestOlderRoomsAreInQueueMode(t *testing.T) {
	v := room.View{Exists: true, Config: baseConfig()}
	if v.EffectiveMode() != room.ModeQueue || v.Closed() != nil {
		t.Fatalf("no mode: got %q %v, want queue", v.EffectiveMode(), v.Closed())
	}
}
