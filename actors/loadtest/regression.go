package loadtest

import (
	"strconv"
	"strings"

	"github.com/aditus-queue/aditus-queue/bench/history"
)

// Comparable reports whether two runs measured the same thing: the same
// room, profile, rate and duration.
func (r *Run) Comparable(o *Run) bool {
	return r.SiteID == o.SiteID && r.Profile == o.Profile && r.RatePerSecond == o.RatePerSecond &&
		r.DurationSeconds == o.DurationSeconds
}

// record is the run as bench's history sees it, so the rule of
// `bench --compare` (history.Compare) judges it unchanged.
func (r *Run) record() history.Record {
	t := r.Totals
	if t == nil {
		t = &Totals{}
	}
	return history.Record{
		ID: r.ID, Timestamp: r.StartedAt, Profile: string(r.Profile), Mode: "open", Rate: r.RatePerSecond,
		Label:           r.SiteID + "/" + strconv.Itoa(r.DurationSeconds),
		DurationSeconds: float64(r.DurationSeconds), ElapsedSeconds: t.ElapsedSeconds,
		Requests: t.Requests, OK: t.OK, ErrorRate: t.ErrorRate, AchievedRate: t.AchievedRate,
		P50Ms: t.P50Ms, P95Ms: t.P95Ms, P99Ms: t.P99Ms, MaxMs: t.MaxMs,
	}
}

// Judge compares a finished run with the finished runs of past that are
// comparable to it and older, by history.Compare with its default
// thresholds (the last five such runs: p99 above 1.5× their median, an
// achieved rate below 0.9× theirs, or a higher error rate). It returns the
// figures that failed (p99Ms, achievedRate, errorRate) with the reasons;
// none when there is nothing to compare with.
func Judge(cur *Run, past []*Run) (figures, reasons []string) {
	var recs []history.Record
	for _, p := range past {
		if p.State == StateFinished && p.Totals != nil && p.ID != cur.ID && p.Comparable(cur) {
			recs = append(recs, p.record())
		}
	}
	v := history.Compare(cur.record(), recs, history.DefaultThresholds)
	for _, why := range v.Reasons {
		switch {
		case strings.HasPrefix(why, "p99"):
			figures = append(figures, "p99Ms")
		case strings.HasPrefix(why, "achieved rate"):
			figures = append(figures, "achievedRate")
		case strings.HasPrefix(why, "error rate"):
			figures = append(figures, "errorRate")
		}
	}
	return figures, v.Reasons
}
