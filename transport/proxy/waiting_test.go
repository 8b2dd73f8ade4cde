package proxy

import (
	"fmt"
	"testing"
	"time"
)

// waitingRoom is a full room (one slot) whose addresses bring two
// visitors and one a minute.
const waitingRoom = `active = 1
      on_store_error = "wait"
      address_budget {
        per_minute = 1
        burst      = 2
      }`

// TestGateWaitingCookieBudget: 1,000 requests of one waiting cookie from
// one address within the refresh interval make one call to the room, each
// answered with the room's last answer; after the interval the room is
// asked again.
func TestGateWaitingCookieBudget(t *testing.T) {
	f := newFakeRoom(t, waitingRoom)
	f.get("192.0.2.1", "") // takes the slot
	_, c := f.get("203.0.113.7", "")
	checks := f.store.checks
	for i := range 1000 {
		w, _ := f.get("203.0.113.7", c)
		if w.Code != 503 || place(t, w) != "1" {
			t.Fatalf("request %d: %d at %q, want 503 at 1", i, w.Code, place(t, w))
		}
	}
	if got := f.store.checks - checks; got != 1 {
		t.Fatalf("1,000 requests of a waiting cookie made %d calls to the room, want 1", got)
	}
	if got := metric(t, f.h, "aditus_queue_proxy_waiting_cached_total"); got != 999 {
		t.Fatalf("answers from the last answer counted %v, want 999", got)
	}
	f.now = f.now.Add(10 * time.Second)
	f.get("203.0.113.7", c)
	if got := f.store.checks - checks; got != 2 {
		t.Fatalf("after the refresh interval: %d calls to the room, want 2", got)
	}
}

// TestGateWaitingAddressBudget: one address cycling 20 waiting cookies
// (taken from other addresses) makes at most its budget of calls to the
// room, a burst and a minute's worth of visitors (2 + 1); beyond it the
// page with no place, 503 and Retry-After; another address is not
// affected, and the budget refills in a refresh interval.
func TestGateWaitingAddressBudget(t *testing.T) {
	f := newFakeRoom(t, waitingRoom)
	f.get("192.0.2.1", "")
	var cookies []string
	for i := range 20 {
		_, c := f.get(fmt.Sprintf("198.51.100.%d", i+1), "")
		cookies = append(cookies, c)
	}
	checks := f.store.checks
	refused := 0
	for i := range 1000 {
		w, _ := f.get("203.0.113.7", cookies[i%len(cookies)])
		if w.Code != 503 {
			t.Fatalf("request %d: %d, want 503", i, w.Code)
		}
		if place(t, w) == "…" {
			refused++
			if w.Header().Get("Retry-After") == "" {
				t.Fatal("a refusal without Retry-After")
			}
		}
	}
	if got := f.store.checks - checks; got != 3 || refused != 1000-3*50 {
		t.Fatalf("1,000 requests: %d calls to the room, %d refused; want 3, %d", got, refused, 1000-3*50)
	}
	if got := metric(t, f.h, "aditus_queue_proxy_waiting_refusals_total"); got != float64(refused) {
		t.Fatalf("refusals counted %v, want %d", got, refused)
	}
	if w, _ := f.get("203.0.113.8", cookies[10]); place(t, w) == "…" {
		t.Fatal("another address was refused")
	}
	f.now = f.now.Add(10 * time.Second)
	if w, _ := f.get("203.0.113.7", cookies[11]); place(t, w) == "…" {
		t.Fatal("the address has no budget after a refresh interval")
	}
}
