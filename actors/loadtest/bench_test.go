package loadtest

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkReplay measures rebuilding the history from the log: a
// ten-minute run is one start, 120 batches of five seconds and one end.
func BenchmarkReplay(b *testing.B) {
	var recs [][]byte
	add := func(e Event) {
		e.V = 1
		data, _ := json.Marshal(e)
		recs = append(recs, data)
	}
	at := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	for r := range 10 {
		id := "lt" + string(rune('a'+r))
		add(Event{Type: TypeRunStarted, Run: &Run{ID: id, Spec: Spec{SiteID: "r1", Profile: ProfileMix, RatePerSecond: 1000, DurationSeconds: 600}, State: StateRunning, StartedAt: at}})
		for batch := range 120 {
			secs := make([]Second, 5)
			for i := range secs {
				secs[i] = Second{Index: batch*5 + i + 1, T: at.Unix(), Requests: 1000, OK: 999, Errors: 1, AchievedRate: 999, P50Ms: 1.2, P95Ms: 4.5, ErrorRate: 0.001}
			}
			add(Event{Type: TypeRunSeconds, RunID: id, Seconds: secs})
		}
		add(Event{Type: TypeRunEnded, RunID: id, End: &End{State: StateFinished, EndedAt: at, Totals: &Totals{Requests: 600000}}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var st State
		for i, r := range recs {
			st.Apply(int64(i), r)
		}
	}
	b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
}
