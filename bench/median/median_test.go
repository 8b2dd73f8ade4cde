package median

import "testing"

func TestMedian(t *testing.T) {
	id := func(v float64) float64 { return v }
	for _, tc := range []struct {
		name      string
		xs        []float64
		of, lower float64
	}{
		{"none", nil, 0, 0},
		{"one", []float64{7}, 7, 7},
		{"odd, unsorted", []float64{9, 1, 5}, 5, 5},
		{"even: the mean, or the lower", []float64{4, 1, 3, 2}, 2.5, 2},
		{"two", []float64{10, 20}, 15, 10},
		{"repeated", []float64{3, 3, 3, 1}, 3, 3},
		{"negative", []float64{-1, -3, -2}, -2, -2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.xs, id); got != tc.of {
				t.Errorf("Of: got %v, want %v", got, tc.of)
			}
			if got := Lower(tc.xs, id); got != tc.lower {
				t.Errorf("Lower: got %v, want %v", got, tc.lower)
			}
		})
	}
	before := []float64{3, 1, 2}
	Of(before, id)
	if before[0] != 3 || before[1] != 1 {
		t.Fatalf("Of sorted its argument: %v", before)
	}
}
