package node

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"log/slog"
	"os"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// countingLog counts appends, so a test sees how many writes joins cost.
type countingLog struct {
	persistence.Log
	appends atomic.Int64
}

func (l *countingLog) Append(ctx context.Context, stream string, data ...[]byte) ([]int64, error) {
	l.appends.Add(1)
	return l.Log.Append(ctx, stream, data...)
}

func createRoom(t *testing.T, n *Node, slug string, rate float64) (id string, r *Room) {
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

// Many visitors joining at once at one front share cluster calls, and each
// gets a number of its own with a ticket the front accepts (invariant 1).
func TestJoinsTravelInBatches(t *testing.T) {
	n := startNode(t, memlog.New())
	stopNode(t, n)
	id, r := createRoom(t, n, "batched", 60)
	const workers, each = 64, 40
	var (
		mu   sync.Mutex
		seen = map[uint64]bool{}
		wg   sync.WaitGroup
	)
	before := n.Client.joins.batches.Load()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				j, err := n.Client.Join(ctx, id)
				cancel()
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := room.ParseTicket(r.TicketKey, id, j.Ticket); err != nil || got != j.Number {
					t.Errorf("ticket of %d: got %d %v", j.Number, got, err)
				}
				if j.View.Issued < j.Number {
					t.Errorf("answer of %d shows issued %d", j.Number, j.View.Issued)
				}
				mu.Lock()
				if seen[j.Number] {
					t.Errorf("number %d issued twice", j.Number)
				}
				seen[j.Number] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != workers*each {
		t.Fatalf("got %d distinct numbers, want %d", len(seen), workers*each)
	}
	for i := uint64(1); i <= workers*each; i++ {
		if !seen[i] {
			t.Fatalf("number %d missing: numbers of one activation have no gaps", i)
		}
	}
	batches := n.Client.joins.batches.Load() - before
	t.Logf("%d joins in %d batches", workers*each, batches)
	if batches > workers*each/2 {
		t.Fatalf("got %d cluster calls for %d joins, want them batched", batches, workers*each)
	}
}

// windowedRoom starts a member with a room of slug whose front gathers
// joins for window.
func windowedRoom(t *testing.T, slug string, window time.Duration) (*Node, string, *batcher) {
	t.Helper()
	n := startNode(t, memlog.New())
	stopNode(t, n)
	id, _ := createRoom(t, n, slug, 60)
	b := n.Client.joins
	b.mu.Lock()
	b.window = window
	b.mu.Unlock()
	return n, id, b
}

// waitWindow waits until the batch of room id is back and its window runs:
// a join that came while the batch was on its way would be sent right
// after it, without waiting for the window.
func waitWindow(t *testing.T, b *batcher, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		rb := b.rooms[id]
		ok := rb != nil && rb.armed && !rb.sending
		b.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the window after the first batch never started")
		}
		time.Sleep(time.Millisecond)
	}
}

// A quiet room's join does not wait for company: it is sent at once, and
// the next one within the window waits for the window's end.
func TestQuietRoomsJoinGoesAtOnce(t *testing.T) {
	n, id, b := windowedRoom(t, "quiet", time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.Client.Join(ctx, id); err != nil {
		t.Fatalf("the first join of a quiet room waited for the window: %v", err)
	}
	waitWindow(t, b, id)
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	if _, err := n.Client.Join(short, id); err == nil {
		t.Fatal("a second join within the window went at once; want it gathered until the window ends")
	}
}

// Within one front node, first come is first served exactly: joins get
// numbers in the order they arrived at the front.
func TestBatchKeepsArrivalOrder(t *testing.T) {
	n, id, b := windowedRoom(t, "ordered", 3*time.Second) // every join below lands in one batch
	// The first join of a quiet room goes at once and opens a window in
	// which the visitors below gather.
	if _, err := n.Client.Join(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	waitWindow(t, b, id)
	const visitors = 20
	got := make([]uint64, visitors)
	var wg sync.WaitGroup
	for i := range visitors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := n.Client.Join(context.Background(), id)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = j.Number
		}()
		// The next visitor arrives after this one is in line.
		for deadline := time.Now().Add(5 * time.Second); ; {
			b.mu.Lock()
			rb := b.rooms[id]
			k := 0
			if rb != nil {
				k = len(rb.pending)
			}
			b.mu.Unlock()
			if k == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("visitor %d never got in line (%d pending)", i, k)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wg.Wait()
	for i := 1; i < visitors; i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("arrival order %v: visitor %d got %d after %d", got, i, got[i], got[i-1])
		}
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
			n, err := Start(Config{Member: true, CallTimeout: 10 * time.Second, Deps: Deps{Log: l, Sealer: sealer, Hash: hash,
				WriteTimeout: time.Second, Logger: startNodeLogger()}})
			if err != nil {
				t.Fatal(err)
			}
			stopNode(t, n)
			id, _ := createRoom(t, n, "outage", 60)
			ctx := context.Background()
			if _, err := n.Client.Join(ctx, id); err != nil {
				t.Fatal(err)
			}
			l.mode.Store(tc.mode)
			start := time.Now()
			var last uint64
			for {
				j, err := n.Client.Join(ctx, id)
				if IsCode(err, CodeLogUnavailable) {
					break
				}
				if err != nil {
					t.Fatalf("join while the log is down: got %v, want log_unavailable", err)
				}
				last = j.Number // still from the block reserved before
				if time.Since(start) > 9*time.Second {
					t.Fatal("joins never failed while the log was down")
				}
			}
			took := time.Since(start)
			t.Logf("first log_unavailable %v after the log went down (after number %d)", took, last)
			if took > 5*time.Second {
				t.Fatalf("first log_unavailable after %v, want well under the 10 s call timeout", took)
			}
			if !n.Client.joins.breaker.open(id) {
				t.Fatal("circuit not open after log_unavailable")
			}
			calls := n.Client.joins.batches.Load()
			t0 := time.Now()
			if _, err := n.Client.Join(ctx, id); !IsCode(err, CodeLogUnavailable) {
				t.Fatalf("join with the circuit open: got %v, want log_unavailable", err)
			}
			if d := time.Since(t0); d > time.Second {
				t.Fatalf("join with the circuit open took %v", d)
			}
			if got := n.Client.joins.batches.Load(); got != calls {
				t.Fatalf("join with the circuit open made %d cluster calls, want none", got-calls)
			}
			if r := n.Views.cached(id); r == nil || r.View.Issued < last {
				t.Fatal("the view for status answers is gone")
			}
			l.mode.Store(0)
			deadline := time.Now().Add(20 * time.Second)
			for {
				j, err := n.Client.Join(ctx, id)
				if err == nil {
					if j.Number <= last {
						t.Fatalf("after recovery got number %d, want above %d", j.Number, last)
					}
					break
				}
				if !IsCode(err, CodeLogUnavailable) {
					t.Fatalf("join while recovering: %v", err)
				}
				if time.Now().After(deadline) {
					t.Fatal("joins did not resume after the log came back")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

func startNodeLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// stopNode stops n gracefully when the test ends: a killed node's provider
// keeps polling and delays the next node's first member list.
func stopNode(t *testing.T, n *Node) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
}
