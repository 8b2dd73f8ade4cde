package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// powEnabled asks GET /pow whether joins need proof of work, and with how
// many bits.
func (w *world) powEnabled(t *testing.T, slug string) (bool, float64) {
	t.Helper()
	_, m, _ := w.do("GET", "/queue/"+slug+"/pow", "", nil)
	on, _ := m["enabled"].(bool)
	bits, _ := m["bits"].(float64)
	return on, bits
}

// pollPow polls GET /pow for up to d of real time until it says want.
func (w *world) pollPow(t *testing.T, slug string, want bool, d time.Duration) bool {
	t.Helper()
	return testwait.Poll(d, 20*time.Millisecond, func() bool {
		on, _ := w.powEnabled(t, slug)
		return on == want
	})
}

// TestPowAutoUnderFlood: 20 addresses join together, 200 a second of
// simulated time against an admission rate of 60 a minute; the room asks
// for proof of work within 2 s of simulated time, the flood then draws no
// more numbers, and the work is lifted only after the calm period. Both
// changes are in the rate log with their reasons.
func TestPowAutoUnderFlood(t *testing.T) {
	clock := newStillClock()
	w := newWorld(t, memlog.New(), clock)
	id, _ := w.createRoom("surge", 60)
	w.patchSite(id, func(s map[string]any) { s["pow"] = map[string]any{"auto": true, "bits": 8} })
	if on, _ := w.powEnabled(t, "surge"); on {
		t.Fatal("proof of work before any flood")
	}
	clients := make([]*http.Client, 20)
	for i := range clients {
		clients[i] = visitorFrom(t, "127.0.4."+strconv.Itoa(i+1))
	}
	const step = 100 * time.Millisecond
	var flooded time.Duration
	on := false
	for !on && flooded < 2*time.Second {
		for _, c := range clients {
			if st, m, _ := w.joinFrom(t, c, "surge", ""); st != http.StatusOK {
				t.Fatalf("join at %v of the flood: %d %v", flooded, st, m)
			}
		}
		clock.Advance(step)
		flooded += step
		// Real time for the grain's ticks (every 100 ms) to see the step.
		on = w.pollPow(t, "surge", true, time.Second)
	}
	if !on {
		t.Fatalf("no proof of work after %v of flood", flooded)
	}
	_, bits := w.powEnabled(t, "surge")
	t.Logf("proof of work on after %v of simulated flood, %v bits", flooded, bits)
	if bits <= 8 {
		t.Fatalf("bits %v under a flood of 200×, want more than the room's 8", bits)
	}
	for _, c := range clients {
		if st, m, _ := w.joinFrom(t, c, "surge", ""); st != http.StatusPreconditionRequired {
			t.Fatalf("a bot's join once on: %d %v, want 428", st, m)
		}
	}

	// Calm: nobody joins. Not lifted within CalmFor, lifted after it.
	var calm time.Duration
	for calm < time.Minute && !w.pollPow(t, "surge", false, 500*time.Millisecond) {
		clock.Advance(5 * time.Second)
		calm += 5 * time.Second
	}
	if calm < 30*time.Second || calm >= time.Minute {
		t.Fatalf("lifted after %v of calm, want after 30s and within a minute", calm)
	}
	_, m, _ := w.do("GET", "/api/admin/queue/sites/"+id+"/rate-log", adminTok, nil)
	adj, _ := m["adjustments"].([]any)
	var onSeen, offSeen bool
	for _, a := range adj {
		a := a.(map[string]any)
		if a["rule"] != "pow.auto" {
			continue
		}
		p := a["pow"].(map[string]any)
		onSeen = onSeen || p["bits"].(float64) > 0
		offSeen = offSeen || p["bits"] == 0.0
		if a["reason"] == "" || a["from"] != 60.0 || a["to"] != 60.0 {
			b, _ := json.Marshal(a)
			t.Fatalf("rate-log entry %s, want a reason and the rate unchanged", b)
		}
	}
	if !onSeen || !offSeen {
		t.Fatalf("rate log %v, want pow.auto entries on and off", adj)
	}
}
