// Package spent remembers spent proof-of-work challenges until they
// expire: a best-effort guard against reusing a solution, bounded in
// memory. A challenge is stateless and signed (room.SignChallenge), so any
// node checks it; what a node remembers is only which it has seen spent.
// The real cost for a bot farm is the hash work itself.
package spent

import (
	"sync"
	"time"
)

// Set remembers spent challenge ids until they expire, at most its limit:
// beyond it the oldest spent are forgotten first, and each of those can
// buy one more use before it expires. It is safe for concurrent use.
type Set struct {
	mu sync.Mutex
	// mu guards ids, order and head.
	// ids maps the first 8 bytes of a spent challenge's random id to its
	// expiry (Unix seconds). 64 random bits keep collisions out of reach
	// at this size; a collision only asks a visitor for one more solution.
	ids map[uint64]uint32
	// order holds the ids as they were spent, from head on; expiries follow
	// spending order closely, so pruning from the front frees the expired.
	order []uint64
	head  int
	limit int
}

// New returns a set remembering at most limit challenges (52 bytes an
// entry, measured by BenchmarkSetMemory).
func New(limit int) *Set {
	return &Set{ids: map[uint64]uint32{}, limit: limit}
}

// Spend marks id spent until expires (Unix seconds) and reports whether it
// was fresh at now.
func (s *Set) Spend(id uint64, expires, now uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	if _, ok := s.ids[id]; ok {
		return false
	}
	if len(s.ids) >= s.limit {
		delete(s.ids, s.order[s.head])
		s.head++
	}
	s.ids[id] = expires
	s.order = append(s.order, id)
	return true
}

// pruneLocked drops expired entries from the front of order.
func (s *Set) pruneLocked(now uint32) {
	for s.head < len(s.order) && s.ids[s.order[s.head]] < now {
		delete(s.ids, s.order[s.head])
		s.head++
	}
	if s.head > 4096 && s.head > len(s.order)/2 {
		s.order = append(make([]uint64, 0, len(s.order)-s.head+1024), s.order[s.head:]...)
		s.head = 0
	}
}

// Size returns how many spent challenges are remembered.
func (s *Set) Size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// MaxLimit is the largest limit Limit returns: 16 Mi entries, about 870 MB
// when full, far beyond what any node is meant to remember.
const MaxLimit = 1 << 24

// Limit is the size of a set that remembers every challenge spent at
// perSecond solutions a second sustained for life (the time a challenge
// stays good, room.ChallengeTTL): that count rounded up to a power of two,
// at least 1 and at most MaxLimit. Beyond the rate the set forgets its
// oldest first, and each of those buys one more use before it expires.
func Limit(perSecond int, life time.Duration) int {
	need := float64(perSecond) * life.Seconds()
	n := 1
	for float64(n) < need && n < MaxLimit {
		n <<= 1
	}
	return n
}
