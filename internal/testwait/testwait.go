// Package testwait lets a test wait for what it expects to happen, a
// condition polled against a deadline, in place of sleeping for a guessed
// time: the test goes on as soon as the condition holds, and fails with a
// message that names it when the deadline passes first.
package testwait

import (
	"testing"
	"time"
)

// Poll calls cond every interval until it returns true (Poll returns true)
// or within has passed (Poll returns false, after one last call). cond is
// called at once, so a condition that already holds costs no wait.
func Poll(within, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// Until polls cond every 20 ms and fails t when it does not hold within d,
// naming what was awaited. It must be called from the test's goroutine.
func Until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	UntilEvery(t, d, 20*time.Millisecond, what, cond)
}

// UntilEvery is Until polling every interval, for a condition that costs a
// request to a process or a broker.
func UntilEvery(t testing.TB, d, every time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(d, every, cond) {
		t.Fatalf("%s: not within %v", what, d)
	}
}
