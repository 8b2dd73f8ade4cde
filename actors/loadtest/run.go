// Package loadtest holds the rules of the cluster's load tests as a pure
// package (no actor, no I/O, time passed in): the runs and schedules, the
// events that record them in the log, validation of a request against the
// operator's limits, when a schedule is due, and the regression rule.
// The grain in actors/grain that owns them is a thin shell around State.
package loadtest

import (
	"fmt"
	"math"
	"time"
)

// Profile names what a run sends, as bench/load does: join, status or mix.
type Profile string

// The profiles a load test may use (bench/load's ws profile is not offered:
// it changes the room's rate).
const (
	ProfileJoin   Profile = "join"
	ProfileStatus Profile = "status"
	ProfileMix    Profile = "mix"
)

// RunState is where a run stands.
type RunState string

// The states of a run. Every run ends in exactly one of the last five.
const (
	StateRunning RunState = "running"
	// StateFinished: the run lasted its whole duration.
	StateFinished RunState = "finished"
	// StateStopped: an operator stopped it early.
	StateStopped RunState = "stopped"
	// StateInterrupted: the node running it stopped or crashed; the figures
	// recorded up to then are kept.
	StateInterrupted RunState = "interrupted"
	// StateFailed: the run could not start (the room is gone or no longer
	// a test room, the up-front joins failed).
	StateFailed RunState = "failed"
	// StateSkipped: a schedule came due while another run was going on.
	StateSkipped RunState = "skipped"
)

// Spec is what a run does: which test room, what it sends, how fast and how
// long.
type Spec struct {
	SiteID string `json:"siteId"`
	// Slug is the room's slug when the run was started (the runner's URL).
	Slug            string  `json:"slug"`
	Profile         Profile `json:"profile"`
	RatePerSecond   float64 `json:"ratePerSecond"`
	DurationSeconds int     `json:"durationSeconds"`
}

// Limits bound what a run may ask for; the serve flags set them.
type Limits struct {
	MaxRatePerSecond float64
	MaxSeconds       int
}

// DefaultLimits: 5,000 requests a second for ten minutes at most.
var DefaultLimits = Limits{MaxRatePerSecond: 5000, MaxSeconds: 600}

// FieldError names the request field whose value is refused.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Validate checks a spec's profile, rate and duration against lim (the
// room's existence and test flag are checked by whoever can look it up).
func (s Spec) Validate(lim Limits) error {
	switch {
	case s.SiteID == "":
		return &FieldError{"siteId", "is required: the id of a test room"}
	case s.Profile != ProfileJoin && s.Profile != ProfileStatus && s.Profile != ProfileMix:
		return &FieldError{"profile", "must be join, status or mix"}
	case !(s.RatePerSecond > 0) || s.RatePerSecond > lim.MaxRatePerSecond || math.IsInf(s.RatePerSecond, 0):
		return &FieldError{"ratePerSecond", fmt.Sprintf("must be more than 0 and at most %g", lim.MaxRatePerSecond)}
	case s.DurationSeconds < 1 || s.DurationSeconds > lim.MaxSeconds:
		return &FieldError{"durationSeconds", fmt.Sprintf("must be 1–%d", lim.MaxSeconds)}
	}
	return nil
}

// Second is the figures of one second of a run.
type Second struct {
	// Index counts seconds from 1.
	Index int `json:"index"`
	// T is the end of the second, unix seconds.
	T        int64 `json:"t"`
	Requests int64 `json:"requests"`
	OK       int64 `json:"ok"`
	Errors   int64 `json:"errors"`
	// AchievedRate is successful answers per second.
	AchievedRate float64 `json:"achievedRate"`
	P50Ms        float64 `json:"p50Ms"`
	P95Ms        float64 `json:"p95Ms"`
	// ErrorRate is the share of this second's requests that failed.
	ErrorRate float64 `json:"errorRate"`
}

// Totals are the figures of a whole run.
type Totals struct {
	Requests int64 `json:"requests"`
	OK       int64 `json:"ok"`
	Errors   int64 `json:"errors"`
	// ErrorsByClass counts failures by kind (timeout, 5xx, dropped, …).
	ErrorsByClass  map[string]int64 `json:"errorsByClass,omitempty"`
	ErrorRate      float64          `json:"errorRate"`
	AchievedRate   float64          `json:"achievedRate"`
	ElapsedSeconds float64          `json:"elapsedSeconds"`
	P50Ms          float64          `json:"p50Ms"`
	P95Ms          float64          `json:"p95Ms"`
	P99Ms          float64          `json:"p99Ms"`
	MaxMs          float64          `json:"maxMs"`
}

// Run is one load test, running or ended.
type Run struct {
	ID string `json:"id"`
	Spec
	State RunState `json:"state"`
	// Scheduled marks a run started by schedule ScheduleID.
	Scheduled  bool       `json:"scheduled"`
	ScheduleID string     `json:"scheduleId,omitempty"`
	StartedAt  time.Time  `json:"startedAt"`
	EndedAt    *time.Time `json:"endedAt,omitempty"`
	// Message says why a run failed, was skipped or interrupted.
	Message string  `json:"message,omitempty"`
	Totals  *Totals `json:"totals,omitempty"`
	// Regression is set on a finished scheduled run that is clearly worse
	// than the previous comparable runs; Figures names what failed
	// (p99Ms, achievedRate, errorRate) and Reasons says by how much.
	Regression        bool     `json:"regression"`
	RegressionFigures []string `json:"regressionFigures,omitempty"`
	RegressionReasons []string `json:"regressionReasons,omitempty"`
	// Series is the per-second figures, in order.
	Series []Second `json:"series,omitempty"`
}

// Ended reports whether the run is over.
func (r *Run) Ended() bool { return r.State != StateRunning }

// Summary is the run without its series, as lists show it.
func (r *Run) Summary() Run {
	c := *r
	c.Series = nil
	return c
}
