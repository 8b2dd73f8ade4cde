package clustertest

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// The chaos soak's history checker. The soak records every operation it
// saw answered (a join with its number, a status poll, a token asked for),
// with the moments it was sent and answered, and the history is checked
// against a small sequential model of one room:
//
//   - Numbers: every join gets a number no other join got, and a join sent
//     after another was answered gets a higher number.
//   - A ticket's place: its status always names its own number, the count
//     ahead of it never grows, the serving number it is told never goes
//     back, and once admitted (a status saying so, or a token granted) it
//     stays admitted: no later status says it waits and no later token
//     request is refused as too early.
//   - The room's line: nobody is seen waiting once a visitor with a higher
//     number was seen admitted (with the window moved on by abandoned
//     numbers, a returning visitor is inside it too).
//
// The history is linearizable against the model when there is one order of
// its operations, each taking effect at a moment between its sending and
// its answer, in which every answer is the model's. porcupine checks the
// ticket's place (one partition per ticket: its join, polls and token
// requests) and the room's line (polls and token requests of every ticket,
// the state only the highest number seen admitted). Numbers are checked by
// the rule the model reduces to for them, pair by pair in O(n log n): the
// joins overlap by the thousand while a member is killed, and porcupine's
// search over 120,000 of them, measured, gives no verdict in 60 s. For the
// same reason the serving number is followed per ticket, not across the
// room: a room-wide maximum over 10,000 polls, each with its own value,
// gave no verdict in 2 minutes on a loaded machine.

// opKind is the kind of an operation of the history.
type opKind uint8

const (
	opJoin opKind = iota
	opStatus
	opToken
)

func (k opKind) String() string { return [...]string{"join", "status", "token"}[k] }

// histOp is one answered operation of the soak.
type histOp struct {
	kind       opKind
	ticket     string
	start, end time.Time
	// number is the join's answer, or the number the poll or token
	// request's answer names.
	number int64
	// serving and ahead are a join's or status poll's answer.
	serving, ahead int64
	// admitted: the join or poll said admitted, the token was granted.
	admitted bool
}

func (o histOp) String() string {
	return fmt.Sprintf("%s of number %d (%s…) sent %s, answered %s: serving %d, ahead %d, admitted %v",
		o.kind, o.number, o.ticket[:min(len(o.ticket), 12)], o.start.Format("15:04:05.000000"), o.end.Format("15:04:05.000000"),
		o.serving, o.ahead, o.admitted)
}

// history collects the soak's operations; bounded by the soak's schedules
// (every join and poll is due once) and the token requests (four a second).
type history struct {
	mu  sync.Mutex
	ops []histOp // guarded by mu
}

func (h *history) add(o histOp) {
	h.mu.Lock()
	h.ops = append(h.ops, o)
	h.mu.Unlock()
}

// verdict is the checker's finding.
type verdict struct {
	ops, joins, polls, tokens, tickets int
	// ok: every part of the model holds; unknown: porcupine did not end
	// within its bound (nothing was found illegal).
	ok, unknown bool
	// problems name what is wrong, at most a few of each kind.
	problems []string
	took     time.Duration
}

func (v verdict) String() string {
	s := "linearizable"
	switch {
	case !v.ok:
		s = "NOT linearizable: " + strings.Join(v.problems, "; ")
	case v.unknown:
		s = "no violation found, but porcupine gave no verdict within its bound"
	}
	return fmt.Sprintf("history of %d operations (%d joins, %d status polls, %d token requests, %d tickets), checked in %v: %s",
		v.ops, v.joins, v.polls, v.tokens, v.tickets, v.took.Round(time.Millisecond), s)
}

// checkTimeout bounds each porcupine search.
const checkTimeout = time.Minute

// maxProblems bounds the problems named per part of the model.
const maxProblems = 5

// checkHistory checks ops against the room's model.
func checkHistory(ops []histOp) verdict {
	began := time.Now()
	v := verdict{ops: len(ops), ok: true}
	tickets := map[string]bool{}
	for _, o := range ops {
		tickets[o.ticket] = true
		switch o.kind {
		case opJoin:
			v.joins++
		case opStatus:
			v.polls++
		case opToken:
			v.tokens++
		}
	}
	v.tickets = len(tickets)
	for _, p := range numberProblems(ops) {
		v.fail(p)
	}
	v.porcupine("a ticket's place", ticketModel, ops, ticketProblems)
	var line []histOp
	for _, o := range ops {
		if o.kind != opJoin {
			line = append(line, o)
		}
	}
	v.porcupine("the room's line", lineModel, line, nil)
	v.took = time.Since(began)
	return v
}

func (v *verdict) fail(p string) {
	v.ok = false
	if len(v.problems) < 3*maxProblems {
		v.problems = append(v.problems, p)
	}
}

// porcupine checks ops against m; on a violation, name finds which
// operations break it (nil: the part is named alone).
func (v *verdict) porcupine(part string, m porcupine.Model, ops []histOp, name func([]histOp) []string) {
	switch porcupine.CheckOperationsTimeout(m, operations(ops), checkTimeout) {
	case porcupine.Ok:
	case porcupine.Unknown:
		v.unknown = true
	case porcupine.Illegal:
		if name == nil {
			v.fail(part + " breaks the model")
			return
		}
		for _, p := range name(ops) {
			v.fail(part + ": " + p)
		}
	}
}

func operations(ops []histOp) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		out[i] = porcupine.Operation{ClientId: i, Input: o.kind, Output: o, Call: o.start.UnixNano(), Return: o.end.UnixNano()}
	}
	return out
}

// numberProblems finds a number answered twice and a join answered a
// number not above one answered before it was sent.
func numberProblems(ops []histOp) []string {
	var joins []histOp
	for _, o := range ops {
		if o.kind == opJoin {
			joins = append(joins, o)
		}
	}
	var out []string
	seen := map[int64]histOp{}
	for _, j := range joins {
		if prev, dup := seen[j.number]; dup && len(out) < maxProblems {
			out = append(out, fmt.Sprintf("number %d answered twice: %v and %v", j.number, prev, j))
		}
		seen[j.number] = j
	}
	byEnd := append([]histOp(nil), joins...)
	sort.Slice(byEnd, func(a, b int) bool { return byEnd[a].end.Before(byEnd[b].end) })
	sort.Slice(joins, func(a, b int) bool { return joins[a].start.Before(joins[b].start) })
	// floor is the highest number answered before the join at hand was
	// sent, and by whom.
	var floor histOp
	e := 0
	for _, j := range joins {
		for ; e < len(byEnd) && byEnd[e].end.Before(j.start); e++ {
			if byEnd[e].number > floor.number {
				floor = byEnd[e]
			}
		}
		if floor.number > 0 && j.number <= floor.number && len(out) < 2*maxProblems {
			out = append(out, fmt.Sprintf("number %d answered to a join sent after number %d was answered: %v after %v", j.number, floor.number, j, floor))
		}
	}
	return out
}

// ticketState is the model's state of one ticket: its number (0 before
// its join), the count ahead of it and the serving number last answered
// (ahead -1: none yet), whether it was admitted.
type ticketState struct {
	number, ahead, serving int64
	admitted               bool
}

// ticketStep is the model of one ticket's operations.
func ticketStep(state, _, output any) (bool, any) {
	st, o := state.(ticketState), output.(histOp)
	if st.number != 0 && o.number != st.number {
		return false, st // another number, or a second join
	}
	next := ticketState{number: o.number, ahead: st.ahead, serving: st.serving, admitted: st.admitted || o.admitted}
	switch o.kind {
	case opJoin:
		if st.number != 0 {
			return false, st
		}
		next.ahead, next.serving = o.ahead, o.serving
	case opStatus:
		if st.admitted && !o.admitted {
			return false, st // revoked
		}
		if st.ahead >= 0 && o.ahead > st.ahead {
			return false, st // moved back
		}
		if o.serving < st.serving {
			return false, st // the line went back
		}
		next.ahead, next.serving = o.ahead, o.serving
	case opToken:
		if st.admitted && !o.admitted {
			return false, st // refused as too early once admitted
		}
	}
	return true, next
}

// ticketModel partitions the history by ticket.
var ticketModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			t := op.Output.(histOp).ticket
			if by[t] == nil {
				order = append(order, t)
			}
			by[t] = append(by[t], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, t := range order {
			out = append(out, by[t])
		}
		return out
	},
	Init:  func() any { return ticketState{ahead: -1} },
	Step:  ticketStep,
	Equal: func(a, b any) bool { return a.(ticketState) == b.(ticketState) },
}

// ticketProblems names the tickets whose operations break the model.
func ticketProblems(ops []histOp) []string {
	by := map[string][]histOp{}
	var order []string
	for _, o := range ops {
		if by[o.ticket] == nil {
			order = append(order, o.ticket)
		}
		by[o.ticket] = append(by[o.ticket], o)
	}
	single := ticketModel
	single.Partition = nil
	var out []string
	for _, t := range order {
		if len(out) == maxProblems {
			break
		}
		if !porcupine.CheckOperations(single, operations(by[t])) {
			out = append(out, "ticket of number "+fmt.Sprint(by[t][0].number)+":"+firstBreak(single, by[t]))
		}
	}
	return out
}

// lineModel is the room's line over the polls and token requests of every
// ticket; its state is the highest number seen admitted.
var lineModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, _, output any) (bool, any) {
		admitted, o := state.(int64), output.(histOp)
		if !o.admitted && o.number <= admitted {
			return false, admitted // waits behind a higher number admitted
		}
		if o.admitted {
			admitted = max(admitted, o.number)
		}
		return true, admitted
	},
	Equal: func(a, b any) bool { return a.(int64) == b.(int64) },
}

// firstBreak prints the operations up to the first one (by sending time)
// with which ops stop fitting m: the last few, not a followed ticket's
// hundreds.
func firstBreak(m porcupine.Model, ops []histOp) string {
	ops = append([]histOp(nil), ops...)
	sort.Slice(ops, func(a, b int) bool { return ops[a].start.Before(ops[b].start) })
	k := len(ops)
	for i := 1; i < len(ops); i++ {
		if !porcupine.CheckOperations(m, operations(ops[:i])) {
			k = i
			break
		}
	}
	var b strings.Builder
	if k > 6 {
		fmt.Fprintf(&b, "\n    … %d operations that fit", k-6)
	}
	for _, o := range ops[max(0, k-6):k] {
		b.WriteString("\n    " + o.String())
	}
	return b.String()
}
