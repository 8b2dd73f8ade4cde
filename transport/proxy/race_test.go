//go:build race

package proxy

// raceEnabled: the race detector allocates on its own, so allocation
// counts do not hold under it.
const raceEnabled = true
