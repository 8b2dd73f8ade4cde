package room_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// TestRestoreSimulation restores a room from backups taken at random
// moments of runs of 10⁵ operations (joins, returning tickets of a jump,
// backups, restores, pre-queues and their draws), while the lost node
// goes on handing out numbers until the restore. It checks that no number
// is handed out twice by any node, that every visitor of an image keeps
// the position the image gave them (so nobody is admitted before someone
// who was ahead of them), that the line stands after a restore where it
// stood at the backup, that a returning ticket is placed ahead of every
// later join, that no two visitors share a position, and that every draw
// is as large as the number of visitors who joined its pre-queue.
// Reservations are one number long, so no reservation leaves ghosts and
// the draw's size is exact.
func TestRestoreSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s := &restoreSim{t: t, rng: rand.New(rand.NewPCG(seed, 30)), now: at(0), issued: map[uint64]bool{}}
		s.run(100_000)
		t.Logf("seed %d: %d joins, %d backups, %d restores, %d returned, %d draws (largest %d), %d numbers",
			seed, s.joins, s.backups, s.restores, s.returns, s.draws, s.largest, s.g.st.Issued)
		if s.restores == 0 || s.draws == 0 || s.returns == 0 {
			t.Fatalf("seed %d exercised too little", seed)
		}
	}
}

// visitor is one holder of a number in a room's history.
type visitor struct {
	n uint64
	// preQueue is set for a visitor who joined (or came back) while a
	// draw was armed.
	preQueue bool
}

// history is what a node knows: its visitors and its pre-queue.
type history struct {
	visitors []visitor
	armed    bool
	opensAt  int64
}

func (h history) copy() history {
	h.visitors = slices.Clone(h.visitors)
	return h
}

type restoreSim struct {
	t   *testing.T
	rng *rand.Rand
	g   *grain
	now int64
	h   history
	// issued holds every number any node handed out.
	issued map[uint64]bool

	image   *memLog
	imageH  history
	imageAt int64
	imageV  room.View
	// keep is every visitor of the latest restored image, with the
	// position the image gave them.
	keep map[uint64]uint64
	// keepDraws is how many draws the room had at the restore: a later
	// draw orders the visitors of its pre-queue anew.
	keepDraws int
	// jump holds the lost node's visitors not yet returned.
	jump []uint64
	// lastReturn is the highest position given to a returning ticket.
	lastReturn uint64

	joins, backups, restores, returns, draws int
	largest                                  uint64
}

const simMaxJoinsPerSecond = 1000

func (s *restoreSim) run(ops int) {
	cfg := baseConfig()
	cfg.RatePerMinute = 6000
	s.g = newRoom(s.t, cfg, s.now, 1)
	for i := range ops {
		// At least a millisecond a step: at most simMaxJoinsPerSecond joins.
		s.now += ms + s.rng.Int64N(3*ms)
		s.openIfDue()
		switch r := s.rng.Float64(); {
		case r < 0.7:
			s.join()
		case r < 0.72 && len(s.jump) > 0:
			s.giveBack()
		case r < 0.7205:
			s.backup()
		case r < 0.721 && s.image != nil:
			s.restore()
		case r < 0.7215 && !s.h.armed:
			s.arm()
		}
		if i%5000 == 0 {
			s.check()
		}
	}
	s.check()
}

func (s *restoreSim) hand(n uint64) {
	if n == 0 || s.issued[n] {
		s.t.Fatalf("number %d handed out twice", n)
	}
	s.issued[n] = true
}

func (s *restoreSim) join() {
	n := s.g.mustJoin(s.now)
	s.hand(n)
	s.joins++
	if p := s.g.st.Position(n); !s.h.armed && p <= s.lastReturn {
		s.t.Fatalf("number %d joined after a return at position %d, the return at %d", n, p, s.lastReturn)
	}
	s.h.visitors = append(s.h.visitors, visitor{n: n, preQueue: s.h.armed})
}

func (s *restoreSim) giveBack() {
	i := s.rng.IntN(len(s.jump))
	n := s.jump[i]
	s.jump = slices.Delete(s.jump, i, i+1)
	if st := s.g.st.StatusOf(n, s.now); st.Admitted {
		s.t.Fatalf("jump number %d admitted before it came back: %+v", n, st)
	}
	s.g.giveBack(n, s.now)
	s.hand(s.g.st.Returned[n])
	s.returns++
	if p := s.g.st.Position(n); !s.h.armed {
		s.lastReturn = max(s.lastReturn, p)
	}
	s.h.visitors = append(s.h.visitors, visitor{n: n, preQueue: s.h.armed})
}

func (s *restoreSim) backup() {
	s.g.snapshot()
	s.image, s.imageH, s.imageAt, s.imageV = s.g.backup(), s.h.copy(), s.now, s.g.st.View
	s.imageV.Returned = maps.Clone(s.g.st.Returned)
	s.backups++
}

// restore: the node serving now is lost; the room is restored from the
// latest backup, which is then used up.
func (s *restoreSim) restore() {
	var lost []uint64
	for _, v := range s.h.visitors[len(s.imageH.visitors):] {
		lost = append(lost, v.n)
	}
	top := s.g.st.Issued
	g, upTo := restore(s.t, s.image, s.g.id, s.imageAt, s.now, simMaxJoinsPerSecond, 1)
	if upTo < top {
		s.t.Fatalf("jump to %d, below %d handed out by the lost node", upTo, top)
	}
	if got, was := g.st.ServingAt(s.now), s.imageV.ServingAt(s.imageAt); got != was {
		s.t.Fatalf("serving %.2f after the restore, %.2f at the backup", got, was)
	}
	s.g, s.h, s.image = g, s.imageH, nil
	s.keep, s.keepDraws = map[uint64]uint64{}, len(g.st.Draws)
	for _, v := range s.h.visitors {
		s.keep[v.n] = s.imageV.Position(v.n)
	}
	// Tickets of the lost node that were themselves jump numbers of an
	// earlier restore are in the new jump too.
	s.jump, s.lastReturn = lost, 0
	s.restores++
}

func (s *restoreSim) arm() {
	cfg := s.g.st.Settings()
	cfg.OpensAt = timeAt(s.now - t0 + time.Duration(10+s.rng.IntN(50)).Nanoseconds()*second)
	s.g.configure(cfg, s.now)
	s.h.armed, s.h.opensAt = true, cfg.OpensAt.UnixNano()
}

func (s *restoreSim) openIfDue() {
	if !s.h.armed || s.now < s.h.opensAt {
		return
	}
	s.g.must(s.g.open(s.now))
	s.h.armed = false
	d := s.g.st.Draws[len(s.g.st.Draws)-1]
	want := 0
	for i := range s.h.visitors {
		if s.h.visitors[i].preQueue {
			want++
			s.h.visitors[i].preQueue = false
		}
	}
	if size := d.To - d.From; size != uint64(want) {
		s.t.Fatalf("draw over %d places, %d visitors joined its pre-queue", size, want)
	}
	s.draws++
	s.largest = max(s.largest, d.To-d.From)
}

// check: the image's visitors keep their positions, and no two visitors
// share one.
func (s *restoreSim) check() {
	seen := map[uint64]uint64{}
	for _, v := range s.h.visitors {
		p := s.g.st.Position(v.n)
		if q, ok := s.keep[v.n]; ok && p != q && !s.h.armed && len(s.g.st.Draws) == s.keepDraws {
			s.t.Fatalf("number %d of the image at position %d, the image's %d", v.n, p, q)
		}
		if o, dup := seen[p]; dup && !s.h.armed {
			s.t.Fatalf("numbers %d and %d share position %d", o, v.n, p)
		}
		seen[p] = v.n
	}
}
