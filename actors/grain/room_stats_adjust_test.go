package grain

import (
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// TestAdjustmentsFromTheRateLog checks that the dashboard's adjustments
// are the newest maxAdjustments entries of the room's rate log, oldest
// first, with their rule.
func TestAdjustmentsFromTheRateLog(t *testing.T) {
	for _, tc := range []struct {
		name     string
		changes  int
		want     int
		wantFrom float64
	}{
		{"no controller yet", 0, 0, 0},
		{"a few", 3, 3, 0},
		{"more than a frame carries", maxAdjustments + 7, maxAdjustments, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st room.State
			at := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
			for i := 0; i < tc.changes; i++ {
				st.RateChanges = append(st.RateChanges, room.RateChange{At: at.Add(time.Duration(i) * time.Second),
					From: float64(i), To: float64(i + 1), Rule: "responseMs < 500", Reason: "all rules hold"})
			}
			got := adjustments(&st)
			if got == nil || len(got) != tc.want {
				t.Fatalf("got %d adjustments (nil %v), want %d", len(got), got == nil, tc.want)
			}
			if tc.want == 0 {
				return
			}
			if got[0].From != tc.wantFrom || got[len(got)-1].To != float64(tc.changes) {
				t.Errorf("got %v … %v, want from %v to %v", got[0], got[len(got)-1], tc.wantFrom, tc.changes)
			}
			if got[0].Rule != "responseMs < 500" || got[0].Reason != "all rules hold" {
				t.Errorf("got %+v, want the rule and reason", got[0])
			}
		})
	}
}
