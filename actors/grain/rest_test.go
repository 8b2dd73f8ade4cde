package grain

import (
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestTickPeriod(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	st := room.New("r")
	st.Exists = true
	g := &roomGrain{st: st}
	g.pace.heardAt = time.Now()
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a room just asked: %v, want %v", got, tickInterval)
	}
	g.pace.heardAt = time.Now().Add(-quietAfter - time.Second)
	if got := g.tickPeriod(now); got != quietTick {
		t.Errorf("a room nobody asked for a minute: %v, want %v", got, quietTick)
	}
	g.dirty = true
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a quiet room with a view to publish: %v, want %v", got, tickInterval)
	}
	g.dirty, g.writes.writing = false, true
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a quiet room writing: %v, want %v", got, tickInterval)
	}
	g.writes.writing = false
	opens := now.Add(time.Second)
	st.Config.OpensAt = &opens
	st.Armed = &room.Arm{}
	if got := g.tickPeriod(now); got != tickInterval {
		t.Errorf("a quiet room opening in a second: %v, want %v", got, tickInterval)
	}
}
