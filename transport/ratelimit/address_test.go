package ratelimit

import (
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{math.MinInt64, "1"},
		{-time.Second, "1"},
		{0, "1"},
		{time.Nanosecond, "1"},
		{999 * time.Millisecond, "1"},
		{time.Second, "1"},
		{time.Second + time.Nanosecond, "2"},
		{1500 * time.Millisecond, "2"},
		{2 * time.Second, "2"},
		{time.Hour - time.Nanosecond, "3600"},
		// The longest wait still rounds up without overflowing.
		{math.MaxInt64, "9223372037"},
	} {
		if got := RetryAfter(tc.d); got != tc.want {
			t.Errorf("RetryAfter(%v): got %s, want %s", tc.d, got, tc.want)
		}
	}
}

// TestPerAddress checks a room's address budget: a key's burst, then a
// refusal whose Retry-After brings the token; a /48 shared by many /64s
// holds 32 bursts, not one per /64; and the table's bound.
func TestPerAddress(t *testing.T) {
	key := func(s string) string { return clientaddr.Key(netip.MustParseAddr(s)) }
	for _, tc := range []struct {
		name    string
		rate    float64
		burst   int
		keys    []string
		allowed int
	}{
		{"one address, its burst", 1.0 / 60, 3, []string{key("192.0.2.1"), key("192.0.2.1"), key("192.0.2.1"), key("192.0.2.1")}, 3},
		{"two addresses, a burst each", 1.0 / 60, 1, []string{key("192.0.2.1"), key("192.0.2.2"), key("192.0.2.1")}, 2},
		{"a /48's /64s share 32 bursts", 1.0 / 60, 1, spread(t, 40), 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			l := mustNew(t, PerAddress(tc.rate, tc.burst, c.now))
			allowed := 0
			var wait time.Duration
			for _, k := range tc.keys {
				ok, w := l.Allow(k)
				if ok {
					allowed++
				} else {
					wait = w
				}
			}
			if allowed != tc.allowed {
				t.Fatalf("got %d allowed, want %d", allowed, tc.allowed)
			}
			if wait > 0 {
				secs, _ := time.ParseDuration(RetryAfter(wait) + "s")
				c.step(secs)
				if ok, _ := l.Allow(tc.keys[len(tc.keys)-1]); !ok {
					t.Fatalf("refused after the Retry-After of %s", RetryAfter(wait))
				}
			}
		})
	}
	if got := PerAddress(1, 1, nil).Capacity; got != Addresses {
		t.Fatalf("got a table of %d, want %d", got, Addresses)
	}
}

// spread returns n keys of distinct /64s inside one /48, each in a /56 of
// its own, so that only the /48's budget binds them together.
func spread(t *testing.T, n int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 1})
		keys = append(keys, clientaddr.Key(a))
	}
	return keys
}
