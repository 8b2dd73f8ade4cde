//go:build race

package node

// raceEnabled: two cluster members in one process race inside gRPC under
// the race detector (each remote.Start resets gRPC's global logger while
// the other's server goroutines read it).
const raceEnabled = true
