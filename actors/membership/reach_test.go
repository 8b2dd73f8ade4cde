package membership

import (
	"errors"
	"testing"
)

// The watch's answer follows the provider's health and the member list;
// lost is closed while nobody is reachable and a fresh one opens when a
// member answers again.
func TestReachFollowsHealthAndMembers(t *testing.T) {
	n, known := 0, false
	w := NewReachWatch(func() error { return nil }, func() (int, bool) { return n, known })
	if !w.Reachable() {
		t.Fatal("before the first member list and any health error, calls must wait for the list, not fail")
	}
	known = true
	if w.Reachable() {
		t.Fatal("an empty member list counts as reachable")
	}
	lost := w.LostCh()
	select {
	case <-lost:
	default:
		t.Fatal("lost is open with no member")
	}
	n = 2
	if !w.Reachable() {
		t.Fatal("two members and a healthy provider: unreachable")
	}
	back := w.LostCh()
	select {
	case <-back:
		t.Fatal("lost is still closed once members are back")
	default:
	}
	w.onHealth(errors.New("monitor: no node answered"))
	select {
	case <-back:
	default:
		t.Fatal("the provider found no member, but lost stayed open")
	}
	w.onHealth(nil)
	if !w.Reachable() {
		t.Fatal("healthy again, still unreachable")
	}
}
