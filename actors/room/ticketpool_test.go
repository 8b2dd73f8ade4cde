package room

import (
	"testing"
	"time"
)

// TestTicketCheckTakesNoLock: checking a ticket under a key already seen
// waits for nothing a new key's publishing holds, so the status path,
// which checks a ticket on every request, shares no lock between its
// requests.
func TestTicketCheckTakesNoLock(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdeg")
	tk, err := SignTicket(key, "r1", 7)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ParseTicket(key, "r1", tk); err != nil || n != 7 {
		t.Fatalf("ParseTicket: %d %v", n, err)
	}
	ticketMACs.mu.Lock()
	defer ticketMACs.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := ParseTicket(key, "r1", tk)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a ticket of a known key waited for the lock that publishes new keys")
	}
}
