package live_test

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// BenchmarkStatusWithDashboards measures visitors' status requests per
// second on one node over loopback HTTP, without and with 100 dashboard
// sockets open on the same room: dashboards must not slow visitors. Each
// iteration is one pair of rounds (roundTime without and roundTime with
// the sockets, in alternating order), so the two interleave and the machine's noise falls on
// both; run it with -benchtime=Nx. It reports both rates, their ratio and
// the dashboard frames received per second.
func BenchmarkStatusWithDashboards(b *testing.B) {
	const roundTime, sockets, clients = 2 * time.Second, 100, 32
	e := newEnv(b)
	id := e.CreateRoom("bench", 60)
	for range 64 {
		e.call("POST", "/queue/bench/join", "", nil)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	// round sends status requests from clients goroutines for roundTime
	// and returns how many were answered.
	round := func() int64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(roundTime)
		for g := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; time.Now().Before(stop); i += clients {
					res, err := client.Get(e.URL + "/queue/bench/status?number=" + strconv.Itoa(1+i%64))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("got %d, want 200", res.StatusCode)
						return
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return n.Load()
	}
	var without, with, frames atomic.Int64
	var withTime time.Duration
	withDashboards := func() {
		var conns []*websocket.Conn
		var wg sync.WaitGroup
		var first atomic.Int64
		for range sockets {
			c := e.dial(id, "", adminws.Subprotocol, "bearer."+adminTok)
			conns = append(conns, c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					if _, _, err := c.ReadMessage(); err != nil {
						return
					}
					if k == 0 {
						first.Add(1)
					} else {
						frames.Add(1)
					}
				}
			}()
		}
		testwait.Poll(10*time.Second, 10*time.Millisecond, func() bool { return first.Load() >= sockets })
		if e.hub.Sockets() != sockets {
			b.Fatalf("sockets: got %d, want %d", e.hub.Sockets(), sockets)
		}
		start := time.Now()
		with.Add(round())
		withTime += time.Since(start)
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		// Alternate which round goes first, so neither always follows
		// the other.
		if i%2 == 0 {
			without.Add(round())
			withDashboards()
		} else {
			withDashboards()
			without.Add(round())
		}
		i++
	}
	secs := float64(b.N) * roundTime.Seconds()
	b.ReportMetric(float64(without.Load())/secs, "req/s-without")
	b.ReportMetric(float64(with.Load())/secs, "req/s-with")
	b.ReportMetric(float64(with.Load())/float64(max(without.Load(), 1)), "ratio")
	b.ReportMetric(float64(frames.Load())/withTime.Seconds(), "frames/s")
}
