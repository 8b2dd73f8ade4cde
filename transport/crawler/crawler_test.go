package crawler

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDNS answers from tables and counts the questions; block, when set,
// holds every reverse lookup until it is closed.
type fakeDNS struct {
	ptr   map[string][]string
	a     map[string][]netip.Addr
	calls atomic.Int32
	block chan struct{}
	asked chan string
}

func (d *fakeDNS) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	d.calls.Add(1)
	if d.asked != nil {
		d.asked <- addr
	}
	if d.block != nil {
		select {
		case <-d.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if n, ok := d.ptr[addr]; ok {
		return n, nil
	}
	return nil, errors.New("no such host")
}

func (d *fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.calls.Add(1)
	if a, ok := d.a[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

var (
	google  = ByUserAgent("Googlebot")
	bing    = ByUserAgent("bingbot")
	realBot = netip.MustParseAddr("66.249.66.1")
)

func world() *fakeDNS {
	return &fakeDNS{
		ptr: map[string][]string{
			"66.249.66.1":  {"crawl-66-249-66-1.googlebot.com."},
			"66.249.66.2":  {"rate-limited-proxy-66-249-66-2.google.com."},
			"157.55.39.1":  {"msnbot-157-55-39-1.search.msn.com."},
			"2001:db8::1":  {"crawl-2001-db8--1.googlebot.com."},
			"203.0.113.5":  {"crawl-66-249-66-1.googlebot.com."}, // an attacker's own PTR, naming Google's host
			"203.0.113.6":  {"crawl.googlebot.com.evil.example."},
			"203.0.113.7":  {"evilgooglebot.com."},
			"203.0.113.8":  {"x.bc.googleusercontent.com."},
			"203.0.113.9":  {"crawl-203-0-113-9.googlebot.com."}, // in the domain, but its A record says otherwise
			"198.51.100.1": {"a.example.", "b.example.", "c.example.", "d.example.", "e.example.", "crawl.googlebot.com."},
			"66.249.66.3":  {"crawl-66-249-66-3.googlebot.com."},
			"157.55.39.2":  {"msnbot-157-55-39-2.search.msn.com."},
			"198.51.100.2": {"s1.googlebot.com.", "s2.googlebot.com.", "s3.googlebot.com.", "s4.googlebot.com.", "s5.googlebot.com."},
		},
		a: map[string][]netip.Addr{
			"crawl-66-249-66-1.googlebot.com.":           {realBot},
			"rate-limited-proxy-66-249-66-2.google.com.": {netip.MustParseAddr("66.249.66.2")},
			"msnbot-157-55-39-1.search.msn.com.":         {netip.MustParseAddr("157.55.39.1")},
			"crawl-2001-db8--1.googlebot.com.":           {netip.MustParseAddr("2001:db8::1")},
			"crawl.googlebot.com.evil.example.":          {netip.MustParseAddr("203.0.113.6")},
			"evilgooglebot.com.":                         {netip.MustParseAddr("203.0.113.7")},
			"x.bc.googleusercontent.com.":                {netip.MustParseAddr("203.0.113.8")},
			"crawl-203-0-113-9.googlebot.com.":           {netip.MustParseAddr("66.249.66.9")},
			"crawl-66-249-66-3.googlebot.com.":           {netip.MustParseAddr("::ffff:66.249.66.3")},
			"s5.googlebot.com.":                          {netip.MustParseAddr("198.51.100.2")},
			"crawl.googlebot.com.":                       {netip.MustParseAddr("198.51.100.1")},
			"msnbot-157-55-39-2.search.msn.com.":         {netip.MustParseAddr("157.55.39.2")},
		},
	}
}

func verifier(t *testing.T, dns Resolver, now func() time.Time) *Verifier {
	t.Helper()
	c := Defaults(dns)
	c.Now = now
	v, err := NewVerifier(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		crawler *Crawler
		addr    string
		want    bool
	}{
		{"googlebot", google, "66.249.66.1", true},
		{"google.com host", google, "66.249.66.2", true},
		{"googlebot over IPv6", google, "2001:db8::1", true},
		{"forward answer IPv4-mapped", google, "66.249.66.3", true},
		{"bingbot", bing, "157.55.39.1", true},
		{"bing's host claimed by googlebot", google, "157.55.39.1", false},
		{"attacker's PTR names google's host", google, "203.0.113.5", false},
		{"domain only as a prefix", google, "203.0.113.6", false},
		{"domain only as a suffix of a label", google, "203.0.113.7", false},
		{"any cloud machine", google, "203.0.113.8", false},
		{"in the domain, forward elsewhere", google, "203.0.113.9", false},
		{"no reverse name", google, "192.0.2.1", false},
		{"the right name after other names", google, "198.51.100.1", true},
		{"too many names in the domain", google, "198.51.100.2", false},
		{"no crawler", nil, "66.249.66.1", false},
		{"no address", google, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verifier(t, world(), time.Now)
			var a netip.Addr
			if tc.addr != "" {
				a = netip.MustParseAddr(tc.addr)
			}
			if got := v.Verify(context.Background(), tc.crawler, a); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestByUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)": "Googlebot",
		"googlebot": "Googlebot",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)": "Bingbot",
		"Mozilla/5.0 (Macintosh) Applebot/0.1":                                    "Applebot",
		"bot":                                                                     "",
		"MyMonitor":                                                               "",
		"":                                                                        "",
		"DuckDuckBot/1.1":                                                         "",
		"facebookexternalhit/":                                                    "",
	} {
		got := ""
		if c := ByUserAgent(ua); c != nil {
			got = c.Name
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", ua, got, want)
		}
	}
}

// Answers are cached, the negative ones for less long, and both expire.
func TestVerifyCaches(t *testing.T) {
	dns := world()
	now := time.Unix(1_000_000, 0)
	v := verifier(t, dns, func() time.Time { return now })
	ctx := context.Background()
	fake := netip.MustParseAddr("203.0.113.5")
	for i := 0; i < 3; i++ {
		if !v.Verify(ctx, google, realBot) || v.Verify(ctx, google, fake) {
			t.Fatal("wrong answer")
		}
	}
	if got := dns.calls.Load(); got != 4 {
		t.Fatalf("%d DNS questions for two addresses asked thrice, want 4", got)
	}
	now = now.Add(6 * time.Minute) // the negative answer has expired, the positive not
	v.Verify(ctx, google, realBot)
	v.Verify(ctx, google, fake)
	if got := dns.calls.Load(); got != 6 {
		t.Fatalf("%d DNS questions after the negative TTL, want 6", got)
	}
	now = now.Add(time.Hour)
	v.Verify(ctx, google, realBot)
	if got := dns.calls.Load(); got != 8 {
		t.Fatalf("%d DNS questions after the TTL, want 8", got)
	}
}

func TestVerifyCacheIsBounded(t *testing.T) {
	dns := world()
	c := Defaults(dns)
	c.Capacity = 2
	v, err := NewVerifier(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 50; i++ {
		v.Verify(context.Background(), google, netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}))
	}
	if v.Len() != 2 {
		t.Fatalf("cache holds %d answers, want 2", v.Len())
	}
}

// Beyond the verifications allowed at once, another address is refused at
// once (not cached), while a request for an address being verified waits
// for that answer instead of asking again.
func TestVerifyConcurrencyIsBounded(t *testing.T) {
	dns := world()
	dns.block, dns.asked = make(chan struct{}), make(chan string, 4)
	c := Defaults(dns)
	c.Concurrent = 1
	v, err := NewVerifier(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make(chan bool, 2)
	wg.Add(1)
	go func() { defer wg.Done(); results <- v.Verify(ctx, google, realBot) }()
	<-dns.asked // the first verification is in flight
	if v.Verify(ctx, bing, netip.MustParseAddr("157.55.39.2")) {
		t.Fatal("a second verification ran beyond the bound")
	}
	wg.Add(1)
	go func() { defer wg.Done(); results <- v.Verify(ctx, google, realBot) }()
	close(dns.block)
	wg.Wait()
	for range 2 {
		if !<-results {
			t.Fatal("the verified crawler was refused")
		}
	}
	if got := dns.calls.Load(); got != 2 {
		t.Fatalf("%d DNS questions, want 2 (one reverse, one forward)", got)
	}
	if !v.Verify(ctx, bing, netip.MustParseAddr("157.55.39.2")) {
		t.Fatal("the refused address was cached")
	}
}

func TestNewVerifierRefusesUnsetBounds(t *testing.T) {
	base := Defaults(world())
	for name, mod := range map[string]func(*Config){
		"dns": func(c *Config) { c.DNS = nil }, "timeout": func(c *Config) { c.Timeout = 0 },
		"ttl": func(c *Config) { c.TTL = 0 }, "negative ttl": func(c *Config) { c.NegativeTTL = 0 },
		"capacity": func(c *Config) { c.Capacity = 0 }, "concurrent": func(c *Config) { c.Concurrent = 0 },
		"clock": func(c *Config) { c.Now = nil },
	} {
		c := base
		mod(&c)
		if _, err := NewVerifier(c); err == nil {
			t.Errorf("%s unset: accepted", name)
		}
	}
}
