package loadtest

import (
	"encoding/json"
	"time"
)

// Event types of the load-test stream. Besides these the stream holds the
// activation markers ("activated") of the grain's fencing.
const (
	TypeRunStarted      = "run-started"
	TypeRunSeconds      = "run-seconds"
	TypeRunEnded        = "run-ended"
	TypeScheduleAdded   = "schedule-added"
	TypeScheduleRemoved = "schedule-removed"
	typeActivated       = "activated"
)

// Event is one record of the load-test stream. Its JSON encoding is the
// log format (testdata/events.golden): fields may be added, never renamed.
type Event struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	// Epoch is the offset of the activation marker of the writer.
	Epoch int64 `json:"epoch,omitempty"`
	At    int64 `json:"at"`
	// Run is the run as it started (run-started); a run that never ran
	// (failed, skipped) starts already ended.
	Run   *Run   `json:"run,omitempty"`
	RunID string `json:"runId,omitempty"`
	// Seconds is a batch of per-second figures of RunID (run-seconds), a
	// few seconds at a time, never one record per request.
	Seconds  []Second  `json:"seconds,omitempty"`
	End      *End      `json:"end,omitempty"`
	Schedule *Schedule `json:"schedule,omitempty"`
	// ScheduleID names the schedule removed (schedule-removed).
	ScheduleID string `json:"scheduleId,omitempty"`
}

// End is how a run ended (run-ended).
type End struct {
	State             RunState  `json:"state"`
	EndedAt           time.Time `json:"endedAt"`
	Message           string    `json:"message,omitempty"`
	Totals            *Totals   `json:"totals,omitempty"`
	Regression        bool      `json:"regression,omitempty"`
	RegressionFigures []string  `json:"regressionFigures,omitempty"`
	RegressionReasons []string  `json:"regressionReasons,omitempty"`
}

// MaxRuns is how many runs the state keeps (the newest); older ones leave
// the history at once, and the log after its retention window.
const MaxRuns = 500

// MaxSchedules bounds the schedules.
const MaxSchedules = 100

// State is the run history and the schedules, rebuilt by Apply from the
// stream. It is owned by one grain and not safe for concurrent use.
type State struct {
	Epoch int64 `json:"epoch"`
	// Runs are oldest first.
	Runs      []*Run      `json:"runs"`
	Schedules []*Schedule `json:"schedules"`
}

// Apply applies one record of the stream at offset. It is pure and total:
// an undecodable record, or one written by a superseded activation (its
// epoch is not the latest marker's), changes nothing.
func (s *State) Apply(offset int64, data []byte) {
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		return
	}
	if e.Type == typeActivated {
		s.Epoch = offset
		return
	}
	if e.Epoch != s.Epoch {
		return
	}
	switch e.Type {
	case TypeRunStarted:
		if e.Run == nil || s.Run(e.Run.ID) != nil {
			return
		}
		r := *e.Run
		r.Series = append([]Second(nil), e.Run.Series...)
		s.Runs = append(s.Runs, &r)
		if len(s.Runs) > MaxRuns {
			s.Runs = append([]*Run(nil), s.Runs[len(s.Runs)-MaxRuns:]...)
		}
	case TypeRunSeconds:
		if r := s.Run(e.RunID); r != nil {
			for _, sec := range e.Seconds {
				if n := len(r.Series); n == 0 || sec.Index > r.Series[n-1].Index {
					r.Series = append(r.Series, sec)
				}
			}
		}
	case TypeRunEnded:
		if r := s.Run(e.RunID); r != nil && e.End != nil && !r.Ended() {
			end := e.End.EndedAt
			r.State, r.EndedAt, r.Message, r.Totals = e.End.State, &end, e.End.Message, e.End.Totals
			r.Regression, r.RegressionFigures, r.RegressionReasons = e.End.Regression, e.End.RegressionFigures, e.End.RegressionReasons
		}
	case TypeScheduleAdded:
		if e.Schedule != nil && s.Schedule(e.Schedule.ID) == nil {
			sc := *e.Schedule
			s.Schedules = append(s.Schedules, &sc)
		}
	case TypeScheduleRemoved:
		for i, sc := range s.Schedules {
			if sc.ID == e.ScheduleID {
				s.Schedules = append(s.Schedules[:i:i], s.Schedules[i+1:]...)
				break
			}
		}
	}
}

// Run returns run id, nil when unknown.
func (s *State) Run(id string) *Run {
	for i := len(s.Runs) - 1; i >= 0; i-- {
		if s.Runs[i].ID == id {
			return s.Runs[i]
		}
	}
	return nil
}

// Running returns the run in progress, nil when none.
func (s *State) Running() *Run {
	for i := len(s.Runs) - 1; i >= 0; i-- {
		if !s.Runs[i].Ended() {
			return s.Runs[i]
		}
	}
	return nil
}

// Schedule returns schedule id, nil when unknown.
func (s *State) Schedule(id string) *Schedule {
	for _, sc := range s.Schedules {
		if sc.ID == id {
			return sc
		}
	}
	return nil
}

// Page returns up to limit runs without their series, newest first,
// starting after run before (from the newest when before is ""), and the
// id to pass as before for the next page ("" on the last page). An unknown
// before gives an empty page.
func (s *State) Page(limit int, before string) (runs []Run, next string) {
	end := len(s.Runs)
	if before != "" {
		end = -1
		for i, r := range s.Runs {
			if r.ID == before {
				end = i
			}
		}
		if end < 0 {
			return []Run{}, ""
		}
	}
	runs = []Run{}
	for i := end - 1; i >= 0 && len(runs) < limit; i-- {
		runs = append(runs, s.Runs[i].Summary())
		if len(runs) == limit && i > 0 {
			next = s.Runs[i].ID
		}
	}
	return runs, next
}
