package clustertest

import (
	"strings"
	"testing"
	"time"
)

// The history checker on hand-made histories: a good one passes, and each
// part of the model is broken once, in sequence (found) and with the two
// operations overlapping (then an order exists in which both answers are
// right: not a violation).
func TestHistoryChecker(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	join := func(s, e int, ticket string, n, ahead int64) histOp {
		return histOp{kind: opJoin, ticket: ticket, start: at(s), end: at(e), number: n, serving: n - ahead - 1, ahead: ahead}
	}
	status := func(s, e int, ticket string, n, serving int64) histOp {
		ahead := max(n-serving-1, 0)
		return histOp{kind: opStatus, ticket: ticket, start: at(s), end: at(e), number: n, serving: serving, ahead: ahead, admitted: n <= serving}
	}
	token := func(s, e int, ticket string, n int64, granted bool) histOp {
		return histOp{kind: opToken, ticket: ticket, start: at(s), end: at(e), number: n, admitted: granted}
	}
	good := []histOp{
		join(0, 10, "a", 1, 0), join(5, 15, "b", 3, 2), join(6, 14, "c", 2, 1), // b and c overlap: either order
		status(20, 21, "b", 3, 0), status(22, 23, "c", 2, 1), status(30, 31, "b", 3, 2),
		token(40, 41, "a", 1, true), token(40, 42, "b", 3, false), status(50, 51, "b", 3, 3), token(52, 53, "b", 3, true),
		status(60, 70, "c", 2, 3), status(61, 69, "a", 1, 4),
	}
	for _, tc := range []struct {
		name string
		ops  []histOp
		want string // in the verdict; "" for linearizable
	}{
		{"good", good, ""},
		{"a number twice", append(good[:3:3], join(20, 21, "d", 2, 0)), "answered twice"},
		{"a lower number after", append(good[:3:3], join(20, 21, "d", 1, 0)), "sent after number 3 was answered"},
		{"the count ahead grows", append(good[:4:4], status(16, 17, "b", 3, 1)), "a ticket's place"},
		{"the count ahead grows, overlapping", append(good[:4:4], status(16, 20, "b", 3, 1)), ""},
		{"admitted, then waiting", append(good[:7:7], status(45, 46, "a", 1, 0)), "a ticket's place"},
		{"a token, then too early", append(good[:7:7], token(45, 46, "a", 1, false)), "a ticket's place"},
		{"the line goes back", append(good[:len(good):len(good)], status(80, 81, "a", 1, 3)), "a ticket's place"},
		{"waiting behind a higher number", append(good[:5:5], token(40, 45, "b", 3, true), status(46, 50, "c", 2, 1)), "the room's line"},
		{"waiting behind a higher number, overlapping", append(good[:5:5], token(40, 45, "b", 3, true), status(44, 50, "c", 2, 1)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := checkHistory(tc.ops)
			if v.unknown {
				t.Fatalf("no verdict: %v", v)
			}
			if tc.want == "" {
				if !v.ok {
					t.Fatalf("got %v, want linearizable", v)
				}
				return
			}
			if v.ok || !strings.Contains(v.String(), tc.want) {
				t.Fatalf("got %v, want a violation naming %q", v, tc.want)
			}
		})
	}
}
