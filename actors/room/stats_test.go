package room_test

import (
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The ring keeps one sample a second, 30 minutes deep, and measures the
// inflow as the joins of the last minute.
func TestStatsRing(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 100_000) // 10 a second, burst 50
	s := room.NewStats()
	if _, ok := s.Latest(); ok || s.Len() != 0 {
		t.Fatalf("new ring: got %d samples, want none", s.Len())
	}
	// 20 joins a second for 40 minutes, sampled every 500 ms.
	for ms500 := int64(0); ms500 < 2*40*60; ms500++ {
		now := at(ms500 * 500 * ms)
		for range 10 {
			g.mustJoin(now)
		}
		s.Record(&g.st.View, now)
	}
	if s.Len() != room.StatsDepth {
		t.Fatalf("after 40 minutes: got %d samples, want %d", s.Len(), room.StatsDepth)
	}
	last, _ := s.Latest()
	wantT := at(40*minute-500*ms) / second
	if last.T != wantT || last.Issued != g.st.Issued || last.Rate != 600 {
		t.Fatalf("latest: got %+v, want t %d issued %d rate 600", last, wantT, g.st.Issued)
	}
	if last.Inflow < 1180 || last.Inflow > 1220 {
		t.Fatalf("inflow at 20 joins/s: got %v, want about 1200 a minute", last.Inflow)
	}
	if want := g.st.Waiting(at(40*minute - 500*ms)); last.Waiting != want || last.Waiting == 0 {
		t.Fatalf("waiting: got %d, want %d (> 0)", last.Waiting, want)
	}
	all := s.Since(0, 0)
	if len(all) != room.StatsDepth || all[0].T != wantT-room.StatsDepth+1 {
		t.Fatalf("Since(0): got %d samples from %d, want %d from %d", len(all), all[0].T, room.StatsDepth, wantT-room.StatsDepth+1)
	}
	for i := 1; i < len(all); i++ {
		if all[i].T != all[i-1].T+1 || all[i].Waiting < all[i-1].Waiting {
			t.Fatalf("sample %d: got %+v after %+v, want one a second, waiting rising", i, all[i], all[i-1])
		}
	}
	if got := s.Since(wantT-3, 0); len(got) != 3 || got[0].T != wantT-2 {
		t.Fatalf("Since(t-3): got %+v, want the last 3", got)
	}
	if got := s.Since(wantT, 0); len(got) != 0 {
		t.Fatalf("Since(latest): got %d samples, want none", len(got))
	}
	if got := s.Since(0, 5); len(got) != 5 || got[4].T != wantT {
		t.Fatalf("Since(0, 5): got %d ending %d, want the newest 5", len(got), got[len(got)-1].T)
	}
	// A quiet minute brings the inflow back to zero.
	now := at(42 * minute)
	s.Record(&g.st.View, now)
	if sm, _ := s.Latest(); sm.Inflow != 0 {
		t.Fatalf("inflow after a quiet minute: got %v, want 0", sm.Inflow)
	}
}

func TestStateOf(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 1000)
	if got := room.StateOf(&g.st.View, at(0)); got != room.StateNotQueueing {
		t.Fatalf("empty room: got %s", got)
	}
	for range 100 {
		g.mustJoin(at(0))
	}
	f := room.FiguresOf(&g.st.View, room.Sample{}, at(0))
	if f.State != room.StateQueueing || !f.Active || f.EstimatedWait != 6 {
		t.Fatalf("100 joined at 10/s with a burst of 50: got %+v, want queueing, wait 6 s", f)
	}
	cfg := g.st.Config
	cfg.Active = false
	g.configure(cfg, at(second))
	if got := room.StateOf(&g.st.View, at(second)); got != room.StatePaused {
		t.Fatalf("paused: got %s", got)
	}

	cfg = baseConfig()
	cfg.OpensAt = timeAt(hour)
	g = newRoom(t, cfg, at(0), 1000)
	for range 1000 {
		g.mustJoin(at(0))
	}
	if got := room.StateOf(&g.st.View, at(0)); got != room.StatePreQueue {
		t.Fatalf("before the opening: got %s", got)
	}
	g.must(g.open(at(hour)))
	if got := room.StateOf(&g.st.View, at(hour+second)); got != room.StateDrawn {
		t.Fatalf("pre-queue still admitted: got %s", got)
	}
	if got := room.StateOf(&g.st.View, at(hour+2*minute)); got != room.StateNotQueueing {
		t.Fatalf("pre-queue all admitted: got %s", got)
	}
}
