package room_test

import (
	"errors"
	"math"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// backup copies g's log as a backup would: the records and the snapshot.
func (g *grain) backup() *memLog {
	return &memLog{recs: append([][]byte(nil), g.log.recs...), snap: g.log.snap, snapOff: g.log.snapOff, durable: g.log.durable}
}

// restore activates room id from image, taken at backupAt, at restoreAt as
// `aditus-queue restore` does: the numbers jump at maxRate, then the room
// is recovered from the log as a serving node would.
func restore(tb testing.TB, image *memLog, id string, backupAt, restoreAt int64, maxRate float64, block uint64) (*grain, uint64) {
	tb.Helper()
	r := activate(tb, image, id, restoreAt, block)
	upTo := r.st.JumpAfterRestore(float64(restoreAt-backupAt)/float64(second), maxRate)
	r.must(r.st.DecideJump(upTo, backupAt, restoreAt))
	return r.crash(restoreAt), upTo
}

// giveBack places jump number n whose ticket came back at now.
func (g *grain) giveBack(n uint64, now int64) {
	g.tb.Helper()
	evs, err := g.st.Return(n, now)
	if errors.Is(err, room.ErrNeedBlock) {
		if err := g.reserve(now); err != nil {
			g.tb.Fatalf("reserve: %v", err)
		}
		evs, err = g.st.Return(n, now)
	}
	if err != nil {
		g.tb.Fatalf("return %d: %v", n, err)
	}
	g.must(evs)
}

// A room restored from a backup hands out no number the lost node may have
// handed out after the backup, keeps the image's line in its order at the
// room's rate, and places a ticket of the jump that comes back at the end
// of the line as it stands then.
func TestRestoreKeepsTheLine(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 100)
	var image []uint64
	for i := 0; i < 5000; i++ {
		image = append(image, g.mustJoin(at(int64(i)*ms)))
	}
	g.snapshot()
	backupAt := at(6 * second)
	img := g.backup()
	imageView := g.st.View
	// The lost node goes on at 100 joins a second for ten seconds.
	var lost []uint64
	for i := 0; i < 1000; i++ {
		lost = append(lost, g.mustJoin(backupAt+int64(i)*10*ms))
	}
	restoreAt := backupAt + 10*second
	r, upTo := restore(t, img, g.id, backupAt, restoreAt, 1e6, 100)
	if upTo < lost[len(lost)-1] {
		t.Fatalf("jump to %d, below %d handed out by the lost node", upTo, lost[len(lost)-1])
	}
	waitingImage, waitingAfter := imageView.Waiting(backupAt), r.st.Waiting(restoreAt)
	firstMinute := r.st.Serving(restoreAt+minute) - imageView.Serving(backupAt)
	t.Logf("waiting in the image %d, after the restore %d; admitted in the first minute %d; numbers jump to %d",
		waitingImage, waitingAfter, firstMinute, upTo)
	if waitingAfter != waitingImage {
		t.Fatalf("%d waiting after the restore, %d in the image", waitingAfter, waitingImage)
	}
	if max := r.st.Config.RatePerMinute + r.st.Config.Burst(); float64(firstMinute) > max {
		t.Fatalf("%d admitted in the first minute after the restore, the rate allows %.0f", firstMinute, max)
	}
	for i, n := range image {
		if p := r.st.Position(n); p != imageView.Position(n) || (i > 0 && p <= r.st.Position(image[i-1])) {
			t.Fatalf("number %d of the image at position %d after the restore, %d before", n, p, imageView.Position(n))
		}
	}

	early := r.mustJoin(restoreAt + second)
	if early <= upTo || r.st.Position(early) != uint64(len(image))+1 {
		t.Fatalf("first join after the restore: number %d at position %d, want above %d at %d", early, r.st.Position(early), upTo, len(image)+1)
	}
	// A ticket of the lost node comes back: it holds no place until then.
	back := lost[500]
	if st := r.st.StatusOf(back, restoreAt+2*second); st.Admitted || st.Position != r.st.Places()+1 {
		t.Fatalf("jump number before it comes back: %+v", st)
	}
	if _, err := r.st.Admit(back, restoreAt+hour); !errors.Is(err, room.ErrTooEarly) {
		t.Fatalf("token for a jump number never placed: %v", err)
	}
	r.giveBack(back, restoreAt+2*second)
	late := r.mustJoin(restoreAt + 3*second)
	pe, pb, pl := r.st.Position(early), r.st.Position(back), r.st.Position(late)
	if pe >= pb || pb >= pl || pb != uint64(len(image))+2 {
		t.Fatalf("positions: joined before the return %d, returned %d, joined after %d", pe, pb, pl)
	}
	if _, err := r.st.Return(back, restoreAt+4*second); !errors.Is(err, room.ErrNotInJump) {
		t.Fatalf("second return of the same number: %v", err)
	}
	// The places are in the log: a recovery keeps them.
	r2 := r.crash(restoreAt + 5*second)
	for _, n := range []uint64{image[0], image[len(image)-1], early, back, late} {
		if r2.st.Position(n) != r.st.Position(n) {
			t.Fatalf("position of %d after recovery %d, before %d", n, r2.st.Position(n), r.st.Position(n))
		}
	}
	if st := r2.st.StatusOf(back, restoreAt+hour); !st.Admitted {
		t.Fatalf("returned number not admitted an hour later: %+v", st)
	}
}

// A restore during a pre-queue: the draw orders the visitors who joined,
// not the numbers of the jump.
func TestRestoreDrawCoversOnlyPlaces(t *testing.T) {
	cfg := baseConfig()
	cfg.OpensAt = timeAt(hour)
	g := newRoom(t, cfg, at(0), 1)
	for i := 0; i < 300; i++ {
		g.mustJoin(at(int64(i) * second))
	}
	backupAt := at(20 * minute)
	img := g.backup()
	var lost []uint64
	for i := 0; i < 200; i++ {
		lost = append(lost, g.mustJoin(backupAt+int64(i)*second))
	}
	restoreAt := backupAt + 10*minute
	r, _ := restore(t, img, g.id, backupAt, restoreAt, 1e6, 1)
	var after []uint64
	for i := 0; i < 100; i++ {
		after = append(after, r.mustJoin(restoreAt+int64(i)*second))
	}
	r.giveBack(lost[0], restoreAt+200*second)
	r.must(r.open(at(hour)))
	d := r.st.Draws[len(r.st.Draws)-1]
	t.Logf("draw over %d places (%d numbers issued)", d.To-d.From, r.st.Issued)
	if size := d.To - d.From; size != 300+100+1 {
		t.Fatalf("draw over %d places, want the 401 visitors who joined", size)
	}
	seen := map[uint64]bool{}
	for _, n := range append(append([]uint64{1, 300, lost[0]}, after...), lost[1]) {
		st := r.st.StatusOf(n, at(hour))
		if n == lost[1] {
			if st.Drawn {
				t.Fatalf("jump number never returned is in the draw: %+v", st)
			}
			continue
		}
		if !st.Drawn || st.Position < 1 || st.Position > 401 || seen[st.Position] {
			t.Fatalf("number %d: %+v", n, st)
		}
		seen[st.Position] = true
	}
}

// The places given to returning jump tickets are bounded: past
// MaxReturned a return is refused, and the ticket holds no place.
func TestReturnsBounded(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 1)
	g.mustJoin(at(0))
	img := g.backup()
	r, upTo := restore(t, img, g.id, at(0), at(hour), 1e6, room.MaxReturned+10)
	for n := upTo - room.MaxReturned; n < upTo; n++ {
		r.giveBack(n, at(hour))
	}
	if _, err := r.st.Return(upTo, at(hour)); !errors.Is(err, room.ErrReturnsFull) {
		t.Fatalf("return past the bound: %v", err)
	}
	if !r.st.Unplaced(upTo) || r.st.StatusOf(upTo, at(2*hour)).Admitted {
		t.Fatal("a refused return holds a place")
	}
}

func TestJumpAfterRestoreBounds(t *testing.T) {
	g := newRoom(t, baseConfig(), at(0), 100)
	g.mustJoin(at(0))
	for _, tc := range []struct {
		elapsed, rate float64
		want          uint64
	}{
		{0, 1e6, 100},
		{-5, 1e6, 100}, // a clock behind the backup jumps nothing back
		{1.5, 10, 115},
		{1e300, 1e6, math.MaxUint64},
	} {
		if got := g.st.JumpAfterRestore(tc.elapsed, tc.rate); got != tc.want {
			t.Errorf("JumpAfterRestore(%v, %v): got %d, want %d", tc.elapsed, tc.rate, got, tc.want)
		}
	}
}
