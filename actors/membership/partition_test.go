package membership

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// t0 is the tests' fake clock's start; at(ms) is ms milliseconds after it.
var t0 = time.Unix(1_700_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// The majority rule: a member fails only after it has seen a majority and
// then fewer than a majority for longer than the grace period.
func TestPartitionWatch(t *testing.T) {
	type seen struct {
		ms, members int
	}
	for _, tc := range []struct {
		name   string
		peers  int
		seen   []seen
		check  int
		failed bool
	}{
		{"alone at start, never armed", 3, []seen{{0, 1}}, 10_000, false},
		{"one peer of three lost", 3, []seen{{0, 3}, {100, 2}}, 10_000, false},
		{"cut off from both peers", 3, []seen{{0, 3}, {100, 1}}, 2_200, true},
		{"cut off, within the grace", 3, []seen{{0, 3}, {100, 1}}, 1_900, false},
		{"a flap that heals", 3, []seen{{0, 3}, {100, 1}, {900, 3}}, 10_000, false},
		{"five members, two left", 5, []seen{{0, 5}, {100, 3}}, 10_000, false},
		{"five members, three left", 5, []seen{{0, 5}, {100, 2}}, 2_200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got error
			w := &PartitionWatch{quorum: tc.peers/2 + 1, grace: 2 * time.Second, fail: func(err error) { got = err }}
			for _, s := range tc.seen {
				w.onTopology(memberIDs(s.members), at(s.ms))
			}
			if failed := w.check(at(tc.check)); failed != tc.failed || (got != nil) != tc.failed {
				t.Fatalf("got failed %v (%v), want %v", failed, got, tc.failed)
			}
		})
	}
	t.Run("no member answers, itself included", func(t *testing.T) {
		var got error
		w := &PartitionWatch{quorum: 2, grace: 2 * time.Second, fail: func(err error) { got = err }}
		w.onTopology(memberIDs(3), at(0))
		w.onHealth(errors.New("monitor: no node answered"), at(100))
		if w.check(at(1_000)) {
			t.Fatal("failed within the grace")
		}
		w.onHealth(errors.New("monitor: no node answered"), at(2_000))
		if !w.check(at(2_200)) || got == nil {
			t.Fatal("got no failure after the grace")
		}
		w = &PartitionWatch{quorum: 2, grace: 2 * time.Second, fail: func(error) {}}
		w.onHealth(errors.New("monitor: no node answered"), at(0))
		if w.check(at(10_000)) {
			t.Fatal("failed before it ever saw a majority (starting alone)")
		}
	})
	if w := NewPartitionWatch(nil, 2, time.Second, nil, nil, nil, nil); w != nil {
		t.Fatal("two members: got a watch, want the rule off")
	}
}

// memberIDs is a member list of n members, m0 … m(n−1).
func memberIDs(n int) map[string]bool {
	ids := map[string]bool{}
	for i := range n {
		ids[fmt.Sprintf("m%d", i)] = true
	}
	return ids
}
