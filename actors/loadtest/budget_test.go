package loadtest

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckBudget(t *testing.T) {
	joins := JoinPlan{Share: 1}
	mix := JoinPlan{Upfront: 16, Share: 0.1}
	status := JoinPlan{Upfront: 16}
	for _, tc := range []struct {
		name      string
		spec      Spec
		plan      JoinPlan
		perMinute float64
		burst     int
		refused   bool
	}{
		// 150 joins against 60 + 1.5: most would be 429.
		{"joins over the default budget", Spec{RatePerSecond: 50, DurationSeconds: 3}, joins, 30, 60, true},
		{"joins within the burst", Spec{RatePerSecond: 20, DurationSeconds: 3}, joins, 30, 60, false},
		// 122 planned, 61.5 allowed: just over half.
		{"half refused still runs", Spec{RatePerSecond: 61, DurationSeconds: 2}, joins, 1, 61, false},
		{"half and one refused", Spec{RatePerSecond: 62, DurationSeconds: 2}, joins, 1, 61, true},
		{"mix at the console's pace", Spec{RatePerSecond: 20, DurationSeconds: 60}, mix, 30, 60, false},
		{"mix at 100/s", Spec{RatePerSecond: 100, DurationSeconds: 60}, mix, 30, 60, true},
		{"status draws its tickets only", Spec{RatePerSecond: 5000, DurationSeconds: 600}, status, 30, 60, false},
		{"a widened budget", Spec{RatePerSecond: 5000, DurationSeconds: 600}, joins, 6_000_000, 10_000_000, false},
	} {
		err := tc.spec.CheckBudget(tc.plan, tc.perMinute, tc.burst)
		var fe *FieldError
		if (err != nil) != tc.refused || (err != nil && (!errors.As(err, &fe) || fe.Field != "addressBudget")) {
			t.Errorf("%s: %v, refused want %v", tc.name, err, tc.refused)
		}
	}
}

// The message names the perMinute that lets every planned join through.
func TestCheckBudgetSaysHowFar(t *testing.T) {
	err := Spec{RatePerSecond: 50, DurationSeconds: 60}.CheckBudget(JoinPlan{Share: 1}, 30, 60)
	if err == nil || !strings.Contains(err.Error(), "perMinute 2940 or more") || !strings.Contains(err.Error(), "of the 3000 joins") {
		t.Fatalf("message: %v", err)
	}
	if (Spec{RatePerSecond: 50, DurationSeconds: 60}).CheckBudget(JoinPlan{Share: 1}, 2940, 60) != nil {
		t.Fatal("the suggested budget is refused")
	}
}
