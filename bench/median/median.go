// Package median takes the median of a figure over runs or rounds: the
// comparisons of bench use it so that one noisy run does not decide.
package median

import "slices"

// Of is the median of f over xs: the middle value, or the mean of the two
// middle values of an even count; 0 for none.
func Of[T any](xs []T, f func(T) float64) float64 {
	vs := sorted(xs, f)
	n := len(vs)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// Lower is the lower median of f over xs: the middle value, or the lower
// of the two middle values of an even count, so that it is always a value
// one of xs had; 0 for none.
func Lower[T any](xs []T, f func(T) float64) float64 {
	vs := sorted(xs, f)
	if len(vs) == 0 {
		return 0
	}
	return vs[(len(vs)-1)/2]
}

func sorted[T any](xs []T, f func(T) float64) []float64 {
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	slices.Sort(vs)
	return vs
}
