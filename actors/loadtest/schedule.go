package loadtest

import (
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// Schedule starts a run of Spec whenever Cron comes due.
type Schedule struct {
	ID string `json:"id"`
	// Cron is a standard five-field expression (minute hour day-of-month
	// month day-of-week), read in UTC.
	Cron string `json:"cron"`
	Spec
	CreatedAt time.Time `json:"createdAt"`
}

// ValidateCron accepts exactly the five standard fields. The parser
// (gronx) also reads seconds, years and @tags; those are refused here so a
// schedule means the same to every cron the operator knows.
func ValidateCron(expr string) error {
	fields := strings.Fields(expr)
	if len(fields) != 5 || !gronx.IsValid(strings.Join(fields, " ")) {
		return &FieldError{"cron", "must be a five-field cron expression (minute hour day month weekday), in UTC"}
	}
	if _, err := gronx.NextTickAfter(strings.Join(fields, " "), time.Now().UTC(), false); err != nil {
		return &FieldError{"cron", "never comes due"}
	}
	return nil
}

// Next is the first instant strictly after t, in whole minutes, at which
// expr comes due, read in UTC; ok is false when it never does.
func Next(expr string, t time.Time) (time.Time, bool) {
	n, err := gronx.NextTickAfter(strings.Join(strings.Fields(expr), " "), t.UTC(), false)
	if err != nil {
		return time.Time{}, false
	}
	return n.UTC(), true
}

// Scheduler says which schedules are due. It keeps, per schedule, the next
// instant it fires; it starts from the time it is first told, so instants
// missed while no node held the schedules are not caught up (a load test
// an hour late is not the one the operator asked for). It is not safe for
// concurrent use; the grain calls it from its Receive.
type Scheduler struct {
	next map[string]time.Time
}

// NewScheduler returns an empty scheduler.
func NewScheduler() *Scheduler { return &Scheduler{next: map[string]time.Time{}} }

// Due returns the schedules of list that came due at or before now, once
// each, and forgets schedules no longer in list. A schedule seen for the
// first time fires at its next instant after now.
func (s *Scheduler) Due(list []*Schedule, now time.Time) []*Schedule {
	var due []*Schedule
	seen := make(map[string]bool, len(list))
	for _, sc := range list {
		seen[sc.ID] = true
		at, ok := s.next[sc.ID]
		if !ok {
			if n, ok := Next(sc.Cron, now); ok {
				s.next[sc.ID] = n
			}
			continue
		}
		if now.Before(at) {
			continue
		}
		due = append(due, sc)
		if n, ok := Next(sc.Cron, now); ok {
			s.next[sc.ID] = n
		} else {
			delete(s.next, sc.ID)
		}
	}
	for id := range s.next {
		if !seen[id] {
			delete(s.next, id)
		}
	}
	return due
}
