package loadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/events.golden from the current encoding")

func TestValidate(t *testing.T) {
	ok := Spec{SiteID: "r1", Profile: ProfileJoin, RatePerSecond: 50, DurationSeconds: 3}
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		field string
	}{
		{"valid", func(*Spec) {}, ""},
		{"no site", func(s *Spec) { s.SiteID = "" }, "siteId"},
		{"ws profile", func(s *Spec) { s.Profile = "ws" }, "profile"},
		{"zero rate", func(s *Spec) { s.RatePerSecond = 0 }, "ratePerSecond"},
		{"over rate", func(s *Spec) { s.RatePerSecond = 5001 }, "ratePerSecond"},
		{"at rate", func(s *Spec) { s.RatePerSecond = 5000 }, ""},
		{"zero seconds", func(s *Spec) { s.DurationSeconds = 0 }, "durationSeconds"},
		{"over seconds", func(s *Spec) { s.DurationSeconds = 601 }, "durationSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			err := s.Validate(DefaultLimits)
			var fe *FieldError
			got := ""
			if errors.As(err, &fe) {
				got = fe.Field
			}
			if got != tc.field {
				t.Fatalf("got field %q (%v), want %q", got, err, tc.field)
			}
		})
	}
}

func TestValidateCron(t *testing.T) {
	for _, tc := range []struct {
		expr string
		ok   bool
	}{
		{"* * * * *", true},
		{"*/5 2 * * 1-5", true},
		{"0 3 1 * *", true},
		{"0 0 * * * *", false}, // six fields
		{"@daily", false},
		{"61 * * * *", false},
		{"* * * *", false},
		{"", false},
		{"a b c d e", false},
	} {
		if err := ValidateCron(tc.expr); (err == nil) != tc.ok {
			t.Errorf("ValidateCron(%q) = %v, want ok %v", tc.expr, err, tc.ok)
		}
	}
}

func TestSchedulerFiresOnceAtEachInstant(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 30, 0, time.UTC)
	every := &Schedule{ID: "s1", Cron: "* * * * *"}
	quarter := &Schedule{ID: "s2", Cron: "*/15 * * * *"}
	list := []*Schedule{every, quarter}
	sc := NewScheduler()
	var fired []string
	// A fake clock stepping 10 s at a time over 31 minutes.
	for now := start; now.Before(start.Add(31 * time.Minute)); now = now.Add(10 * time.Second) {
		for _, s := range sc.Due(list, now) {
			fired = append(fired, fmt.Sprintf("%s@%s", s.ID, now.Format("15:04:05")))
		}
	}
	var ones, quarters int
	for _, f := range fired {
		if f[:2] == "s1" {
			ones++
		} else {
			quarters++
		}
	}
	// Every minute from 10:01 (the first instant after the start) to 10:31.
	if ones != 31 {
		t.Errorf("every-minute schedule fired %d times, want 31: %v", ones, fired)
	}
	if quarters != 2 || !slices.Contains(fired, "s2@10:15:00") || !slices.Contains(fired, "s2@10:30:00") {
		t.Errorf("quarter schedule fired %d times, want at 10:15 and 10:30: %v", quarters, fired)
	}
}

func TestSchedulerDoesNotCatchUpNorKeepRemoved(t *testing.T) {
	s := &Schedule{ID: "s1", Cron: "0 * * * *"}
	sc := NewScheduler()
	t0 := time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC)
	if got := sc.Due([]*Schedule{s}, t0); len(got) != 0 {
		t.Fatalf("fired at first sight: %v", got)
	}
	// Five hours later (a node was down): fires once, not five times.
	if got := sc.Due([]*Schedule{s}, t0.Add(5*time.Hour)); len(got) != 1 {
		t.Fatalf("got %d firings after a gap, want 1", len(got))
	}
	if got := sc.Due([]*Schedule{s}, t0.Add(5*time.Hour+time.Second)); len(got) != 0 {
		t.Fatalf("fired twice for one instant")
	}
	sc.Due(nil, t0.Add(6*time.Hour))
	if len(sc.next) != 0 {
		t.Fatalf("removed schedule still tracked: %v", sc.next)
	}
}

func finished(id string, at time.Time, p99, rate, errRate float64) *Run {
	return &Run{ID: id, Spec: Spec{SiteID: "r1", Profile: ProfileJoin, RatePerSecond: 50, DurationSeconds: 3},
		State: StateFinished, StartedAt: at,
		Totals: &Totals{P99Ms: p99, AchievedRate: rate, ErrorRate: errRate, Requests: 150, OK: 150}}
}

func TestJudgeOnRecordedHistories(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var past []*Run
	for i := range 5 {
		past = append(past, finished(fmt.Sprintf("p%d", i), t0.Add(time.Duration(i)*time.Hour), 4+float64(i%2), 50, 0))
	}
	// Runs that must not count: another room, stopped, interrupted.
	other := finished("o1", t0, 100, 1, 0)
	other.SiteID = "r2"
	stopped := finished("o2", t0, 100, 1, 0)
	stopped.State = StateStopped
	past = append(past, other, stopped)

	at := t0.Add(10 * time.Hour)
	for _, tc := range []struct {
		name    string
		cur     *Run
		figures []string
	}{
		{"as before", finished("c", at, 5, 49.5, 0), nil},
		{"slow p99", finished("c", at, 9, 50, 0), []string{"p99Ms"}},
		{"low rate", finished("c", at, 4, 40, 0), []string{"achievedRate"}},
		{"errors", finished("c", at, 4, 50, 0.02), []string{"errorRate"}},
		{"all worse", finished("c", at, 20, 10, 0.5), []string{"p99Ms", "achievedRate", "errorRate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figures, reasons := Judge(tc.cur, past)
			if !slices.Equal(figures, tc.figures) || len(reasons) != len(tc.figures) {
				t.Fatalf("got %v %v, want %v", figures, reasons, tc.figures)
			}
		})
	}
	// Nothing comparable: never a regression.
	lone := finished("c", at, 500, 1, 1)
	lone.RatePerSecond = 51
	if f, _ := Judge(lone, past); len(f) != 0 {
		t.Fatalf("flagged without predecessors: %v", f)
	}
}

func encode(t *testing.T, e Event) []byte {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStateApplyAndPage(t *testing.T) {
	at := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	var st State
	st.Apply(0, []byte(`{"v":1,"type":"activated","at":1}`))
	for i := range 5 {
		r := &Run{ID: fmt.Sprintf("lt%d", i), Spec: Spec{SiteID: "r1", Profile: ProfileJoin, RatePerSecond: 5, DurationSeconds: 2},
			State: StateRunning, StartedAt: at}
		st.Apply(int64(1+3*i), encode(t, Event{V: 1, Type: TypeRunStarted, Run: r}))
		st.Apply(int64(2+3*i), encode(t, Event{V: 1, Type: TypeRunSeconds, RunID: r.ID, Seconds: []Second{{Index: 1}, {Index: 2}}}))
		st.Apply(int64(3+3*i), encode(t, Event{V: 1, Type: TypeRunEnded, RunID: r.ID, End: &End{State: StateFinished, EndedAt: at}}))
	}
	if st.Running() != nil || len(st.Run("lt3").Series) != 2 || st.Run("lt3").State != StateFinished {
		t.Fatalf("state after replay: %+v", st.Run("lt3"))
	}
	page, next := st.Page(2, "")
	if len(page) != 2 || page[0].ID != "lt4" || page[1].ID != "lt3" || next != "lt3" || page[0].Series != nil {
		t.Fatalf("first page %v next %q", page, next)
	}
	page, next = st.Page(2, next)
	if len(page) != 2 || page[0].ID != "lt2" || next != "lt1" {
		t.Fatalf("second page %v next %q", page, next)
	}
	page, next = st.Page(2, next)
	if len(page) != 1 || page[0].ID != "lt0" || next != "" {
		t.Fatalf("last page %v next %q", page, next)
	}
	// A newer activation: records of the old epoch after it are ignored.
	st.Apply(100, []byte(`{"v":1,"type":"activated","at":2}`))
	st.Apply(101, encode(t, Event{V: 1, Type: TypeScheduleAdded, Epoch: 16, Schedule: &Schedule{ID: "stale"}}))
	st.Apply(102, encode(t, Event{V: 1, Type: TypeScheduleAdded, Epoch: 100, Schedule: &Schedule{ID: "s1", Cron: "* * * * *"}}))
	if st.Schedule("stale") != nil || st.Schedule("s1") == nil {
		t.Fatalf("fencing: schedules %v", st.Schedules)
	}
	st.Apply(103, encode(t, Event{V: 1, Type: TypeScheduleRemoved, Epoch: 100, ScheduleID: "s1"}))
	if len(st.Schedules) != 0 {
		t.Fatalf("schedule not removed: %v", st.Schedules)
	}
}

func TestEventsGolden(t *testing.T) {
	at := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	spec := Spec{SiteID: "rabc", Slug: "test-room", Profile: ProfileMix, RatePerSecond: 50, DurationSeconds: 3}
	evs := []Event{
		{V: 1, Type: TypeRunStarted, Epoch: 1, At: 2, Run: &Run{ID: "lt1", Spec: spec, State: StateRunning, Scheduled: true, ScheduleID: "s1", StartedAt: at}},
		{V: 1, Type: TypeRunSeconds, Epoch: 1, At: 3, RunID: "lt1", Seconds: []Second{{Index: 1, T: 1, Requests: 50, OK: 49, Errors: 1, AchievedRate: 49, P50Ms: 1.5, P95Ms: 3, ErrorRate: 0.02}}},
		{V: 1, Type: TypeRunEnded, Epoch: 1, At: 4, RunID: "lt1", End: &End{State: StateFinished, EndedAt: at, Totals: &Totals{Requests: 150, OK: 149, Errors: 1,
			ErrorsByClass: map[string]int64{"5xx": 1}, ErrorRate: 0.0067, AchievedRate: 49.6, ElapsedSeconds: 3, P50Ms: 1, P95Ms: 2, P99Ms: 3, MaxMs: 4},
			Regression: true, RegressionFigures: []string{"p99Ms"}, RegressionReasons: []string{"p99 …"}}},
		{V: 1, Type: TypeScheduleAdded, Epoch: 1, At: 5, Schedule: &Schedule{ID: "s1", Cron: "*/5 * * * *", Spec: spec, CreatedAt: at}},
		{V: 1, Type: TypeScheduleRemoved, Epoch: 1, At: 6, ScheduleID: "s1"},
	}
	var buf bytes.Buffer
	for _, e := range evs {
		buf.Write(encode(t, e))
		buf.WriteByte('\n')
	}
	const path = "testdata/events.golden"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("event encoding changed (run with -update if intended):\ngot  %s\nwant %s", buf.Bytes(), want)
	}
}
