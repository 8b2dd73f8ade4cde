package front_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/node/nodetest"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// Many visitors joining at once at one front share cluster calls, and each
// gets a number of its own with a ticket the front accepts (invariant 1):
// the visitors who arrive while a batch is on its way go in one batch when
// it comes back.
func TestJoinsTravelInBatches(t *testing.T) {
	h := newHeldRoom(t, "batched")
	r := h.n.Views.Cached(h.id)
	if r == nil || r.TicketKey == nil {
		t.Fatal("the room's view is not on the front")
	}
	const workers, each = 64, 40
	var (
		mu   sync.Mutex
		seen = map[uint64]bool{}
		wg   sync.WaitGroup
	)
	check := func(j *protocol.JoinResult) {
		if got, err := room.ParseTicket(r.TicketKey, h.id, j.Ticket); err != nil || got != j.Number {
			t.Errorf("ticket of %d: got %d %v", j.Number, got, err)
		}
		if j.View.Issued < j.Number {
			t.Errorf("answer of %d shows issued %d", j.Number, j.View.Issued)
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[j.Number] {
			t.Errorf("number %d issued twice", j.Number)
		}
		seen[j.Number] = true
	}
	worker := func(first <-chan joined) {
		defer wg.Done()
		f := <-first
		if f.err != nil {
			t.Error(f.err)
			return
		}
		check(f.j)
		for range each - 1 {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			j, err := h.n.Client.Join(ctx, h.id)
			cancel()
			if err != nil {
				t.Error(err)
				return
			}
			check(j)
		}
	}
	// The first visitor's batch is held on its way while the others
	// arrive.
	h.hold.Store(true)
	wg.Add(workers)
	go worker(h.joinAsync())
	<-h.held
	for i := 1; i < workers; i++ {
		go worker(h.joinAsync())
	}
	h.waitPending(t, workers-1)
	close(h.release)
	wg.Wait()
	if len(seen) != workers*each {
		t.Fatalf("got %d distinct numbers, want %d", len(seen), workers*each)
	}
	for i := uint64(1); i <= workers*each; i++ {
		if !seen[i] {
			t.Fatalf("number %d missing: numbers of one activation have no gaps", i)
		}
	}
	sizes := h.sizes()
	t.Logf("%d joins in %d batches", workers*each, len(sizes))
	if len(sizes) < 2 || sizes[0] != 1 || sizes[1] != workers-1 {
		t.Fatalf("first batches %v, want the held one of 1, then the %d who arrived meanwhile together", sizes[:min(len(sizes), 2)], workers-1)
	}
}

// heldRoom starts a member with a room of slug whose front's batches can
// be held on their way: hold makes the next batch sent wait for release
// before it asks the grain.
type heldRoom struct {
	n       *node.Node
	id      string
	b       *front.Batcher
	held    chan int // the held batch's size, once it is on its way
	release chan struct{}
	hold    atomic.Bool
	mu      sync.Mutex // guards sent
	sent    []int      // the size of every batch sent, in order
}

// sizes returns the size of every batch sent so far.
func (h *heldRoom) sizes() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sent)
}

func newHeldRoom(t *testing.T, slug string) *heldRoom {
	t.Helper()
	n := nodetest.Start(t, node.Config{Member: true, Deps: grain.Deps{Log: memlog.New()}})
	id, _ := createRoom(t, n, slug, 60)
	h := &heldRoom{n: n, id: id, b: n.Client.Batcher(), held: make(chan int, 1), release: make(chan struct{})}
	h.b.Intercept(func(send func(id string, count int) front.JoinOutcome, id string, count int) front.JoinOutcome {
		h.mu.Lock()
		h.sent = append(h.sent, count)
		h.mu.Unlock()
		if h.hold.CompareAndSwap(true, false) {
			h.held <- count
			<-h.release
		}
		return send(id, count)
	})
	return h
}

// pending reports the joins gathered for the room.
func (h *heldRoom) pending() int { return h.b.PendingIn(h.id) }

// waitPending waits until k joins are gathered behind the held batch.
func (h *heldRoom) waitPending(t *testing.T, k int) {
	t.Helper()
	nodetest.Eventually(t, 10*time.Second, fmt.Sprintf("%d joins gathered", k), func() bool { return h.pending() == k })
}

type joined struct {
	j   *protocol.JoinResult
	err error
}

// joinAsync joins in a goroutine of its own.
func (h *heldRoom) joinAsync() <-chan joined {
	out := make(chan joined, 1)
	go func() {
		j, err := h.n.Client.Join(context.Background(), h.id)
		out <- joined{j, err}
	}()
	return out
}

// A join of a room with nothing on its way goes at once, alone: joins one
// after the other each make a batch of one and none waits for company.
func TestQuietRoomsJoinGoesAtOnce(t *testing.T) {
	h := newHeldRoom(t, "quiet")
	for i := range 3 {
		before := h.b.JoinBatches()
		if _, err := h.n.Client.Join(context.Background(), h.id); err != nil {
			t.Fatal(err)
		}
		if got := h.b.JoinBatches() - before; got != 1 {
			t.Fatalf("join %d: %d batches, want 1", i, got)
		}
		left := h.b.Rooms()
		if left != 0 {
			t.Fatalf("join %d: %d rooms still gathering after the batch came back", i, left)
		}
	}
	// Held on its way, a join's batch is a batch of one.
	h.hold.Store(true)
	first := h.joinAsync()
	if n := <-h.held; n != 1 {
		t.Fatalf("held batch of %d, want 1", n)
	}
	close(h.release)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
}

// Within one front node, first come is first served exactly: the joins
// that gather while a batch is on its way go together the moment it comes
// back, with numbers in the order they arrived.
func TestBatchKeepsArrivalOrder(t *testing.T) {
	h := newHeldRoom(t, "ordered")
	h.hold.Store(true)
	first := h.joinAsync()
	<-h.held
	const visitors = 20
	outs := make([]<-chan joined, visitors)
	for i := range visitors {
		outs[i] = h.joinAsync()
		h.waitPending(t, i+1) // the next visitor arrives after this one is in line
	}
	before := h.b.JoinBatches()
	close(h.release)
	f := <-first
	if f.err != nil {
		t.Fatal(f.err)
	}
	prev := f.j.Number
	for i, out := range outs {
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.j.Number != prev+1 {
			t.Fatalf("visitor %d got %d after %d, want arrival order", i, r.j.Number, prev)
		}
		prev = r.j.Number
	}
	if got := h.b.JoinBatches() - before; got != 2 {
		t.Fatalf("%d batches after the release, want the held one and one for all who gathered", got)
	}
}

// The joins gathered for a room are bounded: beyond the bound a join is
// refused busy at once, takes no number, and the gathered ones all get
// theirs when the batch on its way comes back.
func TestGatheredJoinsAreBounded(t *testing.T) {
	h := newHeldRoom(t, "bounded")
	h.b.SetMaxPending(3)
	h.hold.Store(true)
	first := h.joinAsync()
	<-h.held
	var outs []<-chan joined
	for i := range 3 {
		outs = append(outs, h.joinAsync())
		h.waitPending(t, i+1)
	}
	if got := h.b.JoinsPending(); got != 3 {
		t.Fatalf("pending gauge %d, want 3", got)
	}
	if _, err := h.n.Client.Join(context.Background(), h.id); !protocol.IsCode(err, protocol.CodeBusy) {
		t.Fatalf("join beyond the bound: got %v, want busy", err)
	}
	if got := h.b.JoinsRefused(); got != 1 {
		t.Fatalf("refused %d, want 1", got)
	}
	close(h.release)
	seen := map[uint64]bool{}
	for _, out := range append(outs, first) {
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
		seen[r.j.Number] = true
	}
	for i := uint64(1); i <= 4; i++ {
		if !seen[i] {
			t.Fatalf("numbers %v: %d missing (the refused join must take none)", seen, i)
		}
	}
	if got := h.b.JoinsPending(); got != 0 {
		t.Fatalf("pending gauge %d after every batch came back, want 0", got)
	}
	if j, err := h.n.Client.Join(context.Background(), h.id); err != nil || j.Number != 5 {
		t.Fatalf("join after the flood: %v %v, want number 5", j, err)
	}
}

// A visitor who gives up while gathered loses the number like a visitor
// who left, and the others are not disturbed.
func TestGatheredJoinGivesUp(t *testing.T) {
	h := newHeldRoom(t, "leaver")
	h.hold.Store(true)
	first := h.joinAsync()
	<-h.held
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := h.n.Client.Join(ctx, h.id); gone <- err }()
	h.waitPending(t, 1)
	after := h.joinAsync()
	h.waitPending(t, 2)
	cancel()
	if err := <-gone; !errors.Is(err, protocol.ErrUnavailable) {
		t.Fatalf("gave up: %v", err)
	}
	close(h.release)
	f, a := <-first, <-after
	if f.err != nil || a.err != nil {
		t.Fatal(f.err, a.err)
	}
	if a.j.Number != f.j.Number+2 {
		t.Fatalf("numbers %d then %d: the leaver's number is skipped, not reused", f.j.Number, a.j.Number)
	}
}

// brokenLog fails or hangs its appends while told to, as a log whose
// broker is down does; a fast fake beside the real broker test.
type brokenLog struct {
	persistence.Log
	mode atomic.Int32 // 0 works, 1 fails at once, 2 hangs until the deadline
}

func (l *brokenLog) Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error) {
	switch l.mode.Load() {
	case 1:
		return nil, errors.New("broker unreachable")
	case 2:
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return l.Log.Append(ctx, stream, data...)
}

// A room whose log cannot be written answers joins log_unavailable at once
// rather than after the call timeout, the front stops sending joins while
// its circuit is open, status stays answerable from the view, and joins
// resume on their own when the log is back.
func TestJoinsFailFastWhileTheLogIsDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode int32
	}{{"failing", 1}, {"hanging", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			l := &brokenLog{Log: memlog.New()}
			// The call timeout is longer than the test may run: a join that
			// waited for it instead of failing fast never returns
			// log_unavailable.
			n := nodetest.Start(t, node.Config{Member: true, CallTimeout: time.Hour, Deps: grain.Deps{Log: l, WriteTimeout: time.Second}})
			id, _ := createRoom(t, n, "outage", 60)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := n.Client.Join(ctx, id); err != nil {
				t.Fatal(err)
			}
			l.mode.Store(tc.mode)
			var last uint64
			for {
				j, err := n.Client.Join(ctx, id)
				if protocol.IsCode(err, protocol.CodeLogUnavailable) {
					break
				}
				if err != nil {
					t.Fatalf("join while the log is down: got %v, want log_unavailable", err)
				}
				last = j.Number // still from the block reserved before
			}
			if !n.Client.Batcher().CircuitOpen(id) {
				t.Fatal("circuit not open after log_unavailable")
			}
			calls := n.Client.JoinBatches()
			if _, err := n.Client.Join(ctx, id); !protocol.IsCode(err, protocol.CodeLogUnavailable) {
				t.Fatalf("join with the circuit open: got %v, want log_unavailable", err)
			}
			if got := n.Client.JoinBatches(); got != calls {
				t.Fatalf("join with the circuit open made %d cluster calls, want none", got-calls)
			}
			if r := n.Views.Cached(id); r == nil || r.View.Issued < last {
				t.Fatal("the view for status answers is gone")
			}
			l.mode.Store(0)
			var j *protocol.JoinResult
			nodetest.Eventually(t, 20*time.Second, "joins to resume after the log came back", func() bool {
				var err error
				j, err = n.Client.Join(ctx, id)
				if err != nil && !protocol.IsCode(err, protocol.CodeLogUnavailable) {
					t.Fatalf("join while recovering: %v", err)
				}
				return err == nil
			})
			if j.Number <= last {
				t.Fatalf("after recovery got number %d, want above %d", j.Number, last)
			}
		})
	}
}

func createRoom(t *testing.T, n *node.Node, slug string, rate float64) (id string, r *front.Room) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr, err := n.Client.Create(ctx, room.Config{Slug: slug, Name: slug, TargetURL: "https://shop.example.com/",
		RatePerMinute: rate, Active: true}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := n.Views.BySlug(ctx, slug)
	if err != nil || !ok {
		t.Fatalf("BySlug: %v %v", ok, err)
	}
	return cr.View.ID, r
}
