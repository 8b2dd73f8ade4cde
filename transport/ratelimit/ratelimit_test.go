package ratelimit

import (
	"fmt"
	"math"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time       { return c.t }
func (c *clock) step(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                { return &clock{t: time.Unix(1_700_000_000, 0)} }
func mustNew(t testing.TB, c Config) *Limiter {
	t.Helper()
	l, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewRefusesZeroValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
	}{
		{"zero", Config{}},
		{"no rate", Config{Burst: 1, Capacity: 1}},
		{"negative rate", Config{Rate: -1, Burst: 1, Capacity: 1}},
		{"no burst", Config{Rate: 1, Capacity: 1}},
		{"no capacity", Config{Rate: 1, Burst: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.c); err == nil {
				t.Fatal("got a limiter, want an error")
			}
		})
	}
}

func TestBurstThenRate(t *testing.T) {
	c := newClock()
	// 10 a minute, burst 10: the admin sign-in budget.
	l := mustNew(t, Config{Rate: 10.0 / 60, Burst: 10, Capacity: 100, Now: c.now})
	for i := 0; i < 10; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("attempt %d refused within the burst", i+1)
		}
	}
	ok, wait := l.Allow("a")
	if ok {
		t.Fatal("11th attempt allowed, want refused")
	}
	if wait != 6*time.Second {
		t.Fatalf("retry after %v, want 6s (one token at 10/min)", wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key refused: budgets must be per key")
	}
	c.step(wait - time.Millisecond)
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("allowed before the wait it announced")
	}
	c.step(time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("refused after the wait it announced")
	}
	c.step(time.Hour)
	if got := l.Tokens("a"); got != 10 {
		t.Fatalf("tokens after an hour = %v, want the burst, 10", got)
	}
}

func TestWaitTakesNothing(t *testing.T) {
	c := newClock()
	l := mustNew(t, Config{Rate: 1, Burst: 2, Capacity: 10, Now: c.now})
	if d := l.Wait("x"); d != 0 {
		t.Fatalf("unknown key waits %v, want 0", d)
	}
	if l.Len() != 0 {
		t.Fatal("Wait added a key")
	}
	l.Allow("x")
	l.Allow("x")
	if d := l.Wait("x"); d != time.Second {
		t.Fatalf("wait = %v, want 1s", d)
	}
	if d := l.Wait("x"); d != time.Second {
		t.Fatalf("second wait = %v, want 1s: Wait must not take a token", d)
	}
	c.step(time.Second)
	if d := l.Wait("x"); d != 0 {
		t.Fatalf("wait after refill = %v, want 0", d)
	}
}

func TestAllowN(t *testing.T) {
	c := newClock()
	l := mustNew(t, Config{Rate: 2, Burst: 4, Capacity: 10, Now: c.now})
	if ok, _ := l.AllowN("k", 3); !ok {
		t.Fatal("3 of 4 refused")
	}
	ok, wait := l.AllowN("k", 2)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("got %v, %v; want refused, 500ms", ok, wait)
	}
	if got := l.Tokens("k"); got != 1 {
		t.Fatalf("a refused AllowN took tokens: %v left, want 1", got)
	}
	if ok, wait := l.AllowN("k", 100); ok || wait != 1500*time.Millisecond {
		t.Fatalf("more than the burst: got %v, %v; want refused, time to fill", ok, wait)
	}
}

func TestCapacityEvictsLeastRecentlyUsed(t *testing.T) {
	c := newClock()
	l := mustNew(t, Config{Rate: 1, Burst: 1, Capacity: 3, Now: c.now})
	for _, k := range []string{"a", "b", "c"} {
		l.Allow(k)
	}
	l.Allow("a") // a is now the most recent; b the least
	l.Allow("d") // evicts b
	if l.Len() != 3 || l.Evicted() != 1 {
		t.Fatalf("len %d, evicted %d; want 3, 1", l.Len(), l.Evicted())
	}
	if got := l.Tokens("b"); got != 1 {
		t.Fatalf("evicted key has %v tokens, want a full bucket", got)
	}
	if got := l.Tokens("a"); got != 0 {
		t.Fatalf("a kept %v tokens, want 0: the recent key must not be evicted", got)
	}
	for i := 0; i < 10_000; i++ {
		l.Allow(fmt.Sprint(i))
	}
	if l.Len() != 3 {
		t.Fatalf("len %d after a flood of keys, want the capacity 3", l.Len())
	}
}

func TestConcurrentUseGrantsNoMoreThanTheBudget(t *testing.T) {
	c := newClock() // the clock never moves: exactly the burst is granted
	l := mustNew(t, Config{Rate: 1, Burst: 50, Capacity: 10, Now: c.now})
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if ok, _ := l.Allow("shared"); ok {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if granted != 50 {
		t.Fatalf("granted %d, want exactly the burst, 50", granted)
	}
}

func BenchmarkAllowRefused(b *testing.B) {
	l := mustNew(b, Config{Rate: 1e-9, Burst: 1, Capacity: 1 << 16})
	l.Allow("flooder")
	b.ReportAllocs()
	for b.Loop() {
		l.Allow("flooder")
	}
}

func BenchmarkAllowManyKeys(b *testing.B) {
	l := mustNew(b, Config{Rate: 1, Burst: 10, Capacity: 1 << 16})
	keys := make([]string, 1<<17)
	for i := range keys {
		keys[i] = fmt.Sprint("10.0.", i>>8, ".", i&255)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Allow(keys[i&(len(keys)-1)])
		i++
	}
}

// TestPrefixFloodKeepsOthersState: a client holding an IPv6 /48 sends
// from 65,536 of its /64s into a table of 65,536 keys. It gets its /48's
// burst (32 bursts of one key), not a fresh burst per /64, and the bucket
// of another client that spent its burst is still there: that client is
// not handed a new one.
func TestPrefixFloodKeepsOthersState(t *testing.T) {
	c := newClock()
	const burst, capacity = 10, 1 << 16
	l := mustNew(t, Config{Rate: 1.0 / 60, Burst: burst, Capacity: capacity, Now: c.now,
		Groups: clientaddr.Wider, Scales: clientaddr.WiderScales})
	victim := clientaddr.Key(netip.MustParseAddr("2001:db8:ffff::1"))
	for range burst {
		l.Allow(victim)
	}
	if ok, _ := l.Allow(victim); ok {
		t.Fatal("the victim has more than its burst")
	}
	allowed := 0
	for i := range capacity {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, byte(i >> 8), byte(i), 15: 1})
		if ok, _ := l.Allow(clientaddr.Key(a)); ok {
			allowed++
		}
	}
	if allowed > burst*32 {
		t.Fatalf("the /48 flooder got %d tokens from 65,536 /64s, want at most its /48's burst %d", allowed, burst*32)
	}
	if ok, _ := l.Allow(victim); ok {
		t.Fatal("the victim's spent bucket was pushed out of the table: it has a fresh burst")
	}
	if l.Evicted() != 0 {
		t.Fatalf("%d buckets evicted by one /48", l.Evicted())
	}
	// The /56 alone: a household's eight bursts at most.
	in56 := 0
	for i := range 256 {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0x00, 0x02, 0x00, byte(i), 15: 1})
		if ok, _ := l.Allow(clientaddr.Key(a)); ok {
			in56++
		}
	}
	if in56 != burst*8 {
		t.Fatalf("a /56's 256 /64s got %d tokens, want its burst %d", in56, burst*8)
	}
}

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
