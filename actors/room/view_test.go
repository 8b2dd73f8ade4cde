package room_test

import (
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// What a visitor is told: position, how many are ahead, the wait and when
// to ask again.
func TestStatusOf(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 2000) // 10 a second, burst 50
	for range 1000 {
		g.mustJoin(at(0))
	}
	for _, tc := range []struct {
		name     string
		n        uint64
		now      int64
		admitted bool
		ahead    uint64
		wait     int
		retry    int
	}{
		{"inside the burst", 50, at(0), true, 0, 0, 1},
		{"first outside the burst", 51, at(0), false, 0, 1, 2},
		{"last in the queue", 1000, at(0), false, 949, 95, 9},
		{"last, a minute later", 1000, at(minute), false, 349, 35, 3},
		{"far in the queue, retry capped", 1000, at(0) + 1, false, 949, 95, 9},
		{"reached exactly", 1000, at(95 * second), true, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := g.st.StatusOf(tc.n, tc.now)
			if st.Number != tc.n || st.Position != tc.n || st.Admitted != tc.admitted || st.Ahead != tc.ahead ||
				st.EstimatedWait != tc.wait || st.RetryAfter != tc.retry || !st.Active || st.PreQueue || st.Drawn {
				t.Fatalf("got %+v, want admitted %v ahead %d wait %d retry %d", st, tc.admitted, tc.ahead, tc.wait, tc.retry)
			}
		})
	}
	if w := g.st.Waiting(at(0)); w != 950 {
		t.Fatalf("waiting: got %d, want 950", w)
	}
	if w := g.st.Waiting(at(hour)); w != 0 {
		t.Fatalf("waiting an hour later: got %d, want 0", w)
	}
	t.Run("retry capped at 30 s", func(t *testing.T) {
		g := newRoom(t, baseConfig(), at(0), 100_000)
		for range 100_000 {
			g.mustJoin(at(0))
		}
		if st := g.st.StatusOf(100_000, at(0)); st.RetryAfter != 30 || st.EstimatedWait != 9995 {
			t.Fatalf("got %+v, want retry 30, wait 9995", st)
		}
	})
	t.Run("paused", func(t *testing.T) {
		cfg := g.st.Config
		cfg.Active = false
		g.configure(cfg, at(second))
		if st := g.st.StatusOf(1000, at(minute)); st.Active || st.Admitted || st.RetryAfter != 10 || st.Ahead != 939 {
			t.Fatalf("got %+v, want inactive, 939 ahead, retry 10", st)
		}
	})
	t.Run("pre-queue counts down to the opening", func(t *testing.T) {
		cfg := baseConfig()
		cfg.OpensAt = timeAt(hour)
		g := newRoom(t, cfg, at(0), 100)
		n := g.mustJoin(at(0))
		st := g.st.StatusOf(n, at(hour-100*second))
		if !st.PreQueue || st.Admitted || st.EstimatedWait != 100 || st.RetryAfter != 10 || st.OpensAt == nil || !st.OpensAt.Equal(*cfg.OpensAt) {
			t.Fatalf("got %+v, want a pre-queue 100 s from the opening", st)
		}
	})
}

// Fronts keep the newest view: a later activation, else a later version,
// else more numbers issued.
func TestViewNewer(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b room.View
		want bool
	}{
		{"later epoch", room.View{Epoch: 9, Version: 1}, room.View{Epoch: 3, Version: 50, Issued: 900}, true},
		{"earlier epoch", room.View{Epoch: 3, Version: 50}, room.View{Epoch: 9, Version: 1}, false},
		{"later version", room.View{Epoch: 3, Version: 6}, room.View{Epoch: 3, Version: 5, Issued: 900}, true},
		{"same version, more issued", room.View{Epoch: 3, Version: 5, Issued: 10}, room.View{Epoch: 3, Version: 5, Issued: 9}, true},
		{"same", room.View{Epoch: 3, Version: 5, Issued: 9}, room.View{Epoch: 3, Version: 5, Issued: 9}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Newer(&tc.b); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Invariant 8: a bypass admission does not consume a regular slot.
func TestBypassTakesNoSlot(t *testing.T) {
	g := codeRoom(t)
	for range 500 {
		g.mustJoin(at(minute))
	}
	issued, serving := g.st.Issued, g.st.ServingAt(at(minute))
	for i := range 20 {
		if err := redeem(t, g, "open", at(minute)); err != nil {
			t.Fatalf("redemption %d: %v", i, err)
		}
	}
	if g.st.Issued != issued || g.st.ServingAt(at(minute)) != serving {
		t.Fatalf("after bypasses: issued %d serving %v, want %d %v", g.st.Issued, g.st.ServingAt(at(minute)), issued, serving)
	}
	if n := g.mustJoin(at(minute)); n != issued+1 || g.st.StatusOf(n, at(minute)).Ahead != uint64(n)-uint64(serving)-1 {
		t.Fatalf("next join: got number %d, %d ahead", n, g.st.StatusOf(n, at(minute)).Ahead)
	}
}
