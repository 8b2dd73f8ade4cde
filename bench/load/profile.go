package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Profile names what a run sends.
type Profile string

// The profiles.
const (
	// ProfileJoin: POST /queue/<slug>/join, each a new visitor.
	ProfileJoin Profile = "join"
	// ProfileStatus: GET /queue/<slug>/status?ticket=T over tickets drawn
	// up front.
	ProfileStatus Profile = "status"
	// ProfileMix: the visitor path, joins and status polls in the Mix
	// proportion, polls using tickets from the run's own joins.
	ProfileMix Profile = "mix"
	// ProfileWS: WebSocket push latency after a rate change.
	ProfileWS Profile = "ws"
)

// ParseProfile checks a profile name.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileJoin, ProfileStatus, ProfileMix, ProfileWS:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q: want join, status, mix or ws", s)
}

// Mix is the proportion of the mix profile: Joins joins to Polls status
// polls, in a fixed repeating order (the joins of a cycle first), so runs
// are comparable request for request.
type Mix struct {
	Joins, Polls int
}

// DefaultMix is one join to nine status polls: a visitor who joins and
// polls a few times while waiting.
var DefaultMix = Mix{Joins: 1, Polls: 9}

// ParseMix reads "J:P", e.g. "1:9".
func ParseMix(s string) (Mix, error) {
	j, p, ok := strings.Cut(s, ":")
	joins, err1 := strconv.Atoi(strings.TrimSpace(j))
	polls, err2 := strconv.Atoi(strings.TrimSpace(p))
	if !ok || err1 != nil || err2 != nil || joins < 0 || polls < 0 || joins+polls == 0 || joins > 1000 || polls > 1000 {
		return Mix{}, fmt.Errorf("mix %q: want joins:polls such as 1:9", s)
	}
	return Mix{Joins: joins, Polls: polls}, nil
}

func (m Mix) String() string { return fmt.Sprintf("%d:%d", m.Joins, m.Polls) }

// isJoin reports whether request seq of a mix is a join.
func (m Mix) isJoin(seq uint64) bool {
	return seq%uint64(m.Joins+m.Polls) < uint64(m.Joins)
}

// ticketRing holds the most recent tickets for status polls to use.
type ticketRing struct {
	mu      sync.Mutex // guards tickets and next
	tickets []string
	next    int
}

const ringSize = 4096

func newTicketRing(initial []string) *ticketRing {
	r := &ticketRing{tickets: make([]string, 0, ringSize)}
	for _, t := range initial {
		r.add(t)
	}
	return r
}

func (r *ticketRing) add(t string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tickets) < ringSize {
		r.tickets = append(r.tickets, t)
		return
	}
	r.tickets[r.next] = t
	r.next = (r.next + 1) % ringSize
}

func (r *ticketRing) pick(seq uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tickets[seq%uint64(len(r.tickets))]
}

// request builds the request function of a profile. Tickets must not be
// empty for status and mix.
func (p Profile) request(t *Target, mix Mix, tickets []string) (Request, error) {
	switch p {
	case ProfileJoin:
		return func(ctx context.Context, _ uint64) Class {
			_, c := t.Join(ctx, false)
			return c
		}, nil
	case ProfileStatus:
		return func(ctx context.Context, seq uint64) Class {
			return t.Status(ctx, tickets[seq%uint64(len(tickets))])
		}, nil
	case ProfileMix:
		ring := newTicketRing(tickets)
		return func(ctx context.Context, seq uint64) Class {
			if mix.isJoin(seq) {
				tk, c := t.Join(ctx, true)
				if c == OK {
					ring.add(tk.Ticket)
				}
				return c
			}
			return t.Status(ctx, ring.pick(seq))
		}, nil
	}
	return nil, fmt.Errorf("profile %q has no request loop", p)
}
