package history

import (
	"fmt"
	"slices"

	"github.com/aditus-queue/aditus-queue/bench/median"
)

// Thresholds say when a run counts as worse than its predecessors.
type Thresholds struct {
	// P99Factor: worse when p99 exceeds this many times the median p99 of
	// the previous comparable runs.
	P99Factor float64
	// RateFactor: worse when the achieved rate is below this share of the
	// previous runs' median achieved rate.
	RateFactor float64
	// ErrorRateDelta: worse when the error rate exceeds the previous runs'
	// median error rate by more than this (a share, 0.01 = one point).
	ErrorRateDelta float64
	// Last is how many of the most recent comparable runs to compare with.
	Last int
}

// DefaultThresholds flag a clear regression, not noise.
var DefaultThresholds = Thresholds{P99Factor: 1.5, RateFactor: 0.9, ErrorRateDelta: 0, Last: 5}

// Verdict is the outcome of a comparison.
type Verdict struct {
	// Compared is the number of previous runs compared with; 0 means there
	// was nothing to compare, which is not a regression.
	Compared int
	// Reasons says, one line each, why the run is worse; empty when it is
	// not.
	Reasons []string
	// The medians of the previous runs.
	MedianP99Ms, MedianRate, MedianErrorRate float64
}

// Worse reports whether the run was flagged.
func (v Verdict) Worse() bool { return len(v.Reasons) > 0 }

// Compare compares cur with the records of past that are comparable to it
// and older, taking the th.Last most recent of them.
func Compare(cur Record, past []Record, th Thresholds) Verdict {
	var prev []Record
	for _, r := range past {
		if r.ID != cur.ID && r.Comparable(cur) && r.Timestamp.Before(cur.Timestamp) {
			prev = append(prev, r)
		}
	}
	slices.SortStableFunc(prev, func(a, b Record) int { return a.Timestamp.Compare(b.Timestamp) })
	if th.Last > 0 && len(prev) > th.Last {
		prev = prev[len(prev)-th.Last:]
	}
	v := Verdict{Compared: len(prev)}
	if len(prev) == 0 {
		return v
	}
	v.MedianP99Ms = median.Of(prev, func(r Record) float64 { return r.P99Ms })
	v.MedianRate = median.Of(prev, func(r Record) float64 { return r.AchievedRate })
	v.MedianErrorRate = median.Of(prev, func(r Record) float64 { return r.ErrorRate })
	if v.MedianP99Ms > 0 && cur.P99Ms > th.P99Factor*v.MedianP99Ms {
		v.Reasons = append(v.Reasons, fmt.Sprintf("p99 %.3g ms is more than %.3g× the median %.3g ms of the previous %d comparable runs",
			cur.P99Ms, th.P99Factor, v.MedianP99Ms, len(prev)))
	}
	if v.MedianRate > 0 && cur.AchievedRate < th.RateFactor*v.MedianRate {
		v.Reasons = append(v.Reasons, fmt.Sprintf("achieved rate %.1f/s is below %.3g× the median %.1f/s of the previous %d comparable runs",
			cur.AchievedRate, th.RateFactor, v.MedianRate, len(prev)))
	}
	if cur.ErrorRate > v.MedianErrorRate+th.ErrorRateDelta {
		v.Reasons = append(v.Reasons, fmt.Sprintf("error rate %.3g %% is higher than the median %.3g %% of the previous %d comparable runs",
			100*cur.ErrorRate, 100*v.MedianErrorRate, len(prev)))
	}
	return v
}
