package grain

import (
	"testing"
	"time"
)

// runTicker runs t and returns its ticks and a channel closed when run
// returns.
func runTicker(t *ticker) (<-chan struct{}, <-chan struct{}) {
	ticks, ended := make(chan struct{}, 16), make(chan struct{})
	go func() {
		defer close(ended)
		t.run(func() {
			select {
			case ticks <- struct{}{}:
			default:
			}
		})
	}()
	return ticks, ended
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10 s", what)
	}
}

// A ticker waiting an hour ticks at once when hurried, then every period
// it was hurried to; halted, its loop ends.
func TestTickerHurryAndHalt(t *testing.T) {
	tk := newTicker(time.Hour)
	ticks, ended := runTicker(tk)
	tk.hurry(time.Millisecond)
	waitFor(t, ticks, "tick after the kick")
	waitFor(t, ticks, "tick a period later")
	if got := time.Duration(tk.period.Load()); got != time.Millisecond {
		t.Errorf("period after hurry: %v, want 1ms", got)
	}
	// Hurrying to a longer period changes nothing.
	tk.hurry(time.Hour)
	if got := time.Duration(tk.period.Load()); got != time.Millisecond {
		t.Errorf("period after hurry to an hour: %v, want 1ms", got)
	}
	tk.halt()
	waitFor(t, ended, "end of the loop after halt")

	var resting *ticker
	resting.hurry(time.Millisecond)
	resting.setPeriod(time.Second)
	resting.halt()
}

func TestPacePeriod(t *testing.T) {
	wall := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	now := wall.Add(time.Hour) // the grain's clock may differ
	asked := pace{heardAt: wall.Add(-time.Second)}
	quiet := pace{heardAt: wall.Add(-quietAfter - time.Second)}
	for _, c := range []struct {
		name    string
		p       pace
		active  bool
		opening time.Time
		want    time.Duration
	}{
		{"a room just asked", asked, false, time.Time{}, tickInterval},
		{"a room nobody asked for a minute", quiet, false, time.Time{}, quietTick},
		{"a quiet room with something in flight", quiet, true, time.Time{}, tickInterval},
		{"a quiet room opening in a second", quiet, false, now.Add(time.Second), tickInterval},
		{"a quiet room opening in an hour", quiet, false, now.Add(time.Hour), quietTick},
	} {
		if got := c.p.period(wall, now, c.active, c.opening); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPaceRest(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var p pace
	p.heard(now, time.Now())
	if p.restDue(now.Add(RestAfter-time.Second), false, false) {
		t.Error("a gone room rests before RestAfter")
	}
	later := now.Add(RestAfter)
	if !p.restDue(later, false, false) {
		t.Error("a gone room left alone for RestAfter does not rest")
	}
	if p.restDue(later, true, false) || p.restDue(later, false, true) {
		t.Error("a live room, or one with a write in flight, rests")
	}
	p.resting = true
	if p.restDue(later, false, false) {
		t.Error("a resting room is told to rest again")
	}
}
