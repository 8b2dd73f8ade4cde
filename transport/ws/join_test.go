package ws

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// bareHub is a hub without views or a broadcaster, for the bookkeeping of
// join, leave and Close.
func bareHub(t *testing.T, limits Limits) *Hub {
	t.Helper()
	if err := limits.check(); err != nil {
		t.Fatal(err)
	}
	return newHub(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, limits)
}

// A broadcast that finds a room's entry empty removes it. If it runs while
// a socket joins that room, the socket must end up in an entry the hub
// still holds; otherwise it never gets another frame.
func TestJoinRacingBroadcastKeepsTheSocketReachable(t *testing.T) {
	h := bareHub(t, Limits{PerTicket: 4, PerNode: 10})
	r := &front.Room{View: &room.View{ID: "r1"}}
	// The room's last socket has left: its entry is empty until the next
	// broadcast removes it.
	h.rooms["r1"] = &roomHub{conns: map[*client]struct{}{}, latest: r}
	h.beforeJoin = h.broadcast
	cl := &client{hub: h, number: 1, ticket: ticketKey{"r1", 1}}
	if err := h.reserve(cl.ticket); err != nil {
		t.Fatal(err)
	}
	rh := h.join(r, cl)
	if got := h.rooms["r1"]; got != rh || got == nil {
		t.Fatalf("the socket joined entry %p, the hub holds %p: no frame would reach it", rh, got)
	}
	if _, ok := rh.conns[cl]; !ok {
		t.Fatal("the socket is not in its room's entry")
	}
}

// Close returns after its deadline even when a socket's goroutine does not
// end, so that the node's shutdown goes on.
func TestCloseHasADeadline(t *testing.T) {
	h := bareHub(t, Limits{PerTicket: 1, PerNode: 1})
	h.closeWait = 10 * time.Millisecond
	h.wg.Add(1) // a goroutine that never ends
	if h.Close() {
		t.Fatal("Close reported every goroutine ended")
	}
	if err := h.reserve(ticketKey{"r", 1}); err != errClosed {
		t.Fatalf("a socket after Close: got %v, want errClosed", err)
	}
}

func TestLimitsMustBeSet(t *testing.T) {
	for _, l := range []Limits{{}, {PerTicket: 4}, {PerNode: 10}, {PerTicket: -1, PerNode: 10}} {
		if l.check() == nil {
			t.Errorf("limits %+v accepted", l)
		}
	}
}

// Reservations count against both limits, and leaving gives them back.
func TestReserveCountsTicketAndNode(t *testing.T) {
	h := bareHub(t, Limits{PerTicket: 2, PerNode: 3})
	a, b := ticketKey{"r", 1}, ticketKey{"r", 2}
	for i := 0; i < 2; i++ {
		if err := h.reserve(a); err != nil {
			t.Fatalf("socket %d of a ticket: %v", i+1, err)
		}
	}
	if err := h.reserve(a); err != errTicketFull {
		t.Fatalf("third socket of a ticket: got %v, want errTicketFull", err)
	}
	if err := h.reserve(b); err != nil {
		t.Fatal(err)
	}
	if err := h.reserve(ticketKey{"r", 3}); err != errNodeFull {
		t.Fatalf("fourth socket of the node: got %v, want errNodeFull", err)
	}
	h.unreserve(a)
	if err := h.reserve(ticketKey{"r", 3}); err != nil {
		t.Fatalf("after an upgrade failed: %v", err)
	}
	if len(h.tickets) != 3 || h.tickets[a] != 1 || h.upgrading != 3 {
		t.Fatalf("got tickets %v upgrading %d", h.tickets, h.upgrading)
	}
}
