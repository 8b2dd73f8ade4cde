package spent

import (
	"math"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	type limitCase struct {
		name      string
		perSecond int
		life      time.Duration
		want      int
	}
	for _, tc := range []limitCase{
		{"nothing to remember", 0, 300 * time.Second, 1},
		{"negative rate", -5, 300 * time.Second, 1},
		{"no life", 100, 0, 1},
		{"one", 1, time.Second, 1},
		{"a power of two exactly", 4, 256 * time.Second, 1 << 10},
		{"one over a power of two", 1025, time.Second, 1 << 11},
		{"a part of a second rounds up", 1, 1500 * time.Millisecond, 2},
		{"a node: 1,700 a second for five minutes", 1700, 300 * time.Second, 1 << 19},
		{"a proxy's room: 870 a second for five minutes", 870, 300 * time.Second, 1 << 18},
		{"capped", math.MaxInt, time.Duration(math.MaxInt64), MaxLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Limit(tc.perSecond, tc.life); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}
