package proxy

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

var pageChallengeRe = regexp.MustCompile(`data-challenge="([^"]+)" data-bits="(\d+)" data-cookie="([^"]+)"`)

// solve answers a challenge page as the page's script does: it solves the
// challenge and asks again with the solution in the cookie. It reports
// whether the answer was a challenge page.
//
// As the page does, it solves again when the answer is another challenge:
// a solution of fewer bits than the room asks by the time it arrives (the
// flood raised them meanwhile) is refused with a new challenge.
func (c *client) solve(base string, st int) (int, string, bool, error) {
	asked := false
	place := ""
	for range 8 {
		m := pageChallengeRe.FindSubmatch(c.body)
		if st != http.StatusServiceUnavailable || m == nil {
			return st, place, asked, nil
		}
		asked = true
		bits, _ := strconv.Atoi(string(m[2]))
		c.cookie = string(m[3]) + "=" + string(m[1]) + "." + room.SolvePow(string(m[1]), bits)
		var err error
		if st, place, err = c.get(base); err != nil {
			return st, place, asked, err
		}
	}
	return st, place, asked, fmt.Errorf("still challenged after 8 solutions")
}

// TestFloodCapacityRoomPowAuto floods a full capacity room with pow_auto
// (600 arrivals a minute, 8 bits) from 200 loopback addresses without
// cookies for 6 s (3 s with -short), while 50 visitors, each from its own
// address, arrive, solve the challenge as the page does, keep their
// cookies and come back after a refresh. Proof of work turns on within 2 s of the flood's
// start; no visitor is shown behind anyone who came after; the places are
// in order of arrival; the log grows within its budget.
func TestFloodCapacityRoomPowAuto(t *testing.T) {
	const (
		refresh = 2 * time.Second
		reals   = 50
	)
	flood := 6 * time.Second
	if testing.Short() {
		flood = 3 * time.Second
	}
	f := startFloodRoom(t, `active = 5
      session = "1h"
      refresh = "2s"
      address_budget { burst = 1000 }
      pow_auto {
        arrivals_per_minute = 600
        bits                = 8
      }`)
	f.fill(t, 5)
	before := f.bytes(t)

	stop := make(chan struct{})
	var sent, challenges, places atomic.Int64
	var armedAt atomic.Int64
	began := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := make([]*client, 50)
			for i := range cs {
				cs[i] = newClient(fmt.Sprintf("127.0.1.%d", 1+g*50+i), false)
			}
			for n := 0; sent.Load() < 2_000_000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				c := cs[n%len(cs)]
				st, place, err := c.get(f.url)
				sent.Add(1)
				switch {
				case err != nil || st != http.StatusServiceUnavailable:
				case place == "" && pageChallengeRe.Match(c.body):
					challenges.Add(1)
					armedAt.CompareAndSwap(0, int64(time.Since(began)))
				case place != "":
					places.Add(1)
				}
			}
		}()
	}
	type visitor struct {
		c          *client
		start, end time.Time // of the request that took the place
		asked      bool      // was given a challenge
		place      int
		err        error
	}
	vs := make([]*visitor, reals)
	var placed, vwg sync.WaitGroup
	done := make(chan struct{})
	for i := range vs {
		vs[i] = &visitor{c: newClient(fmt.Sprintf("127.0.0.%d", 100+i), true)}
		placed.Add(1)
		vwg.Add(1)
		go func(v *visitor, after time.Duration) {
			defer vwg.Done()
			once := sync.OnceFunc(placed.Done)
			defer once()
			time.Sleep(after)
			v.start = time.Now()
			st, _, err := v.c.get(f.url)
			if err == nil {
				v.start = time.Now()
				st, _, v.asked, err = v.c.solve(f.url, st)
			}
			v.end = time.Now()
			// Back every refresh, as the page does, until the flood is
			// over and every visitor's place is counted.
			for err == nil && st == http.StatusServiceUnavailable {
				select {
				case <-done:
					v.err = err
					return
				case <-time.After(refresh):
				}
				var place string
				if st, place, err = v.c.get(f.url); err == nil && st == http.StatusServiceUnavailable {
					if v.place, err = strconv.Atoi(place); err != nil {
						err = fmt.Errorf("a returning visitor was shown %q on the page %q", place, pageTitle(v.c.body))
					}
					once()
				}
			}
			v.err = fmt.Errorf("left the line: %d %v", st, err)
		}(vs[i], time.Second+time.Duration(i)*(flood-time.Second-refresh)/reals)
	}
	time.Sleep(flood)
	close(stop)
	wg.Wait()
	elapsed := time.Since(began)
	grown := f.bytes(t) - before
	placed.Wait()
	close(done)
	vwg.Wait()
	// Every visitor once more, one after another: the line as it stands,
	// once the room's last answers to their pages (which stand for a
	// refresh interval) have aged.
	time.Sleep(refresh)
	for _, v := range vs {
		if v.err != nil {
			continue
		}
		st, place, err := v.c.get(f.url)
		if v.place, _ = strconv.Atoi(place); err != nil || st != http.StatusServiceUnavailable || v.place == 0 {
			v.err = fmt.Errorf("at the end: %d %q %v", st, place, err)
		}
	}

	armed := time.Duration(armedAt.Load())
	if armed == 0 || armed > 2*time.Second {
		t.Errorf("proof of work turned on %v into the flood, want within 2s", armed)
	}
	asked := 0
	for i, v := range vs {
		if v.err != nil {
			t.Fatalf("visitor %d: %v", i, v.err)
		}
		if v.asked {
			asked++
		}
	}
	// In order of arrival: a visitor whose place was taken before
	// another's request began stands ahead of it, and nobody else does
	// but those whose requests overlapped.
	sorted := append([]*visitor(nil), vs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].place < sorted[j].place })
	for i, v := range sorted {
		if v.place != i+1 {
			t.Errorf("places are not 1..%d without gaps: %d at rank %d (the flood stands in line?)", reals, v.place, i+1)
			break
		}
	}
	for _, a := range vs {
		for _, b := range vs {
			if a.end.Before(b.start) && a.place > b.place {
				t.Errorf("a visitor who took the place first is at %d, behind one who came later at %d", a.place, b.place)
			}
		}
	}
	if asked < reals/2 {
		t.Errorf("only %d of %d visitors were asked for proof of work", asked, reals)
	}
	// The log: the pow changes, an expiry a second and each visitor's
	// place, 512 bytes an event at most.
	events := int64(elapsed/time.Second+1) + reals + room.MaxPowBits
	if limit := events * 512; grown > limit {
		t.Errorf("the log grew %d bytes during the flood, more than its budget of %d", grown, limit)
	}
	t.Logf("pow flood: %d requests in %v (%.0f/s): %d challenge pages, %d places shown; proof of work on after %v at %v bits; %d of %d visitors solved a challenge; log +%d bytes (%.0f B/s)",
		sent.Load(), elapsed.Round(time.Millisecond), float64(sent.Load())/elapsed.Seconds(), challenges.Load(), places.Load(),
		armed.Round(time.Millisecond), metric(t, f.h, "aditus_queue_proxy_pow_bits"), asked, reals, grown, float64(grown)/elapsed.Seconds())
}
