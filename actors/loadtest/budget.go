package loadtest

import (
	"fmt"
	"math"
	"strconv"
)

// A run sends every request from the one address of the node that runs
// it, so the room's per-address budget of new numbers (its addressBudget:
// a burst, then so many a minute) bounds the joins it can make; the rest
// are answered 429. A run whose budget would refuse most of its joins
// measures the budget, not the room: it is refused before it starts.

// JoinPlan is how a profile's requests become joins: Upfront joins before
// the first second (the tickets status polls use), then Share of the
// requests.
type JoinPlan struct {
	Upfront int
	Share   float64
}

// PlannedJoins is how many joins a run of s makes under plan.
func (s Spec) PlannedJoins(plan JoinPlan) int {
	return plan.Upfront + int(math.Ceil(s.RatePerSecond*float64(s.DurationSeconds)*plan.Share))
}

// CheckBudget refuses s, naming the room's addressBudget, when a budget of
// burst then perMinute would refuse more than half the joins it plans;
// the message says how far to raise it.
func (s Spec) CheckBudget(plan JoinPlan, perMinute float64, burst int) error {
	planned := s.PlannedJoins(plan)
	minutes := float64(s.DurationSeconds) / 60
	allowed := float64(burst) + perMinute*minutes
	if 2*allowed >= float64(planned) {
		return nil
	}
	need := math.Ceil(float64(planned-burst) / minutes)
	return &FieldError{"addressBudget", fmt.Sprintf(
		"the room lets one address take %d new numbers at once and %s a minute, so about %d of the %d joins this run makes from this server's one address would be refused (429); raise the room's addressBudget for the test (perMinute %s or more) and start again",
		burst, strconv.FormatFloat(perMinute, 'f', -1, 64), int(allowed), planned, strconv.FormatFloat(need, 'f', -1, 64))}
}
