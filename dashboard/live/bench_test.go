package live_test

import (
	"bytes"
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

// The load of BenchmarkStatusWithDashboards: statusClients visitors asking
// for the status of the room's statusNumbers numbers, and dashSockets
// dashboards of the room.
const statusNumbers, statusClients, dashSockets = 64, 32, 100

// statusLoad is a node with a room whose statusNumbers numbers are
// issued, and the rounds of status requests sent to it.
type statusLoad struct {
	tb     testing.TB
	e      *env
	id     string
	client *http.Client
	// frames counts the dashboard frames received after each socket's
	// first (the first carries the history and comes at once).
	frames atomic.Int64
}

func newStatusLoad(tb testing.TB) *statusLoad {
	tb.Helper()
	e := newEnv(tb)
	// Every number is taken from one address, more than the default
	// address budget's burst (60) allows: the room's budget is widened as
	// for a load generator.
	m := e.call("POST", "/api/admin/queue/sites", adminTok, map[string]any{"slug": "bench", "name": "Bench",
		"targetUrl": "https://shop.example.com/", "ratePerMinute": 60, "active": true,
		"addressBudget": map[string]any{"perMinute": 6000, "burst": statusNumbers}})
	id := m["site"].(map[string]any)["id"].(string)
	for range statusNumbers {
		e.call("POST", "/queue/bench/join", "", nil)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: statusClients}}
	tb.Cleanup(client.CloseIdleConnections)
	return &statusLoad{tb: tb, e: e, id: id, client: client}
}

// round sends status requests from statusClients goroutines for d and
// returns how many were answered. Any answer but 200 fails tb and stops
// its goroutine: the round measures status answers, nothing else.
func (s *statusLoad) round(d time.Duration) int64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for g := range statusClients {
		wg.Go(func() {
			for i := g; time.Now().Before(stop); i += statusClients {
				if !s.status(1 + i%statusNumbers) {
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return n.Load()
}

// status asks for number's status and reports whether it was answered 200.
func (s *statusLoad) status(number int) bool {
	res, err := s.client.Get(s.e.URL + "/queue/bench/status?number=" + strconv.Itoa(number))
	if err != nil {
		s.tb.Error(err)
		return false
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK {
		s.tb.Errorf("status of number %d: got %d %s, want 200", number, res.StatusCode, bytes.TrimSpace(body))
		return false
	}
	return true
}

// withDashboards opens dashSockets dashboard sockets on the room, waits
// for each one's first frame, runs a round of d with them open and closes
// them; it returns the round's count and how long the round took.
func (s *statusLoad) withDashboards(d time.Duration) (int64, time.Duration) {
	var conns []*websocket.Conn
	var wg sync.WaitGroup
	var first atomic.Int64
	for range dashSockets {
		c := s.e.dial(s.id, "", adminws.Subprotocol, "bearer."+adminTok)
		conns = append(conns, c)
		wg.Go(func() {
			for k := 0; ; k++ {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
				if k == 0 {
					first.Add(1)
				} else {
					s.frames.Add(1)
				}
			}
		})
	}
	testwait.Until(s.tb, 10*time.Second, "every dashboard's first frame", func() bool { return first.Load() >= dashSockets })
	if got := s.e.hub.Sockets(); got != dashSockets {
		s.tb.Fatalf("sockets: got %d, want %d", got, dashSockets)
	}
	start := time.Now()
	n := s.round(d)
	took := time.Since(start)
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	return n, took
}

// BenchmarkStatusWithDashboards measures visitors' status requests per
// second on one node over loopback HTTP, without and with 100 dashboard
// sockets open on the same room: dashboards must not slow visitors. Each
// iteration is one pair of rounds (roundTime without and roundTime with
// the sockets, in alternating order), so the two interleave and the
// machine's noise falls on both; run it with -benchtime=Nx. It reports
// both rates, their ratio and the dashboard frames received per second.
// It fails, rather than measure something else, when a status request is
// answered anything but 200.
func BenchmarkStatusWithDashboards(b *testing.B) {
	const roundTime = 2 * time.Second
	s := newStatusLoad(b)
	var without, with int64
	var withTime time.Duration
	withDashboards := func() {
		n, took := s.withDashboards(roundTime)
		with += n
		withTime += took
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		// Alternate which round goes first, so neither always follows
		// the other.
		if i%2 == 0 {
			without += s.round(roundTime)
			withDashboards()
		} else {
			withDashboards()
			without += s.round(roundTime)
		}
		i++
	}
	secs := float64(b.N) * roundTime.Seconds()
	b.ReportMetric(float64(without)/secs, "req/s-without")
	b.ReportMetric(float64(with)/secs, "req/s-with")
	b.ReportMetric(float64(with)/float64(max(without, 1)), "ratio")
	b.ReportMetric(float64(s.frames.Load())/withTime.Seconds(), "frames/s")
}

// The benchmark's set-up and one short pair of its rounds run as a test,
// so that a change that makes its requests answer anything but 200 (an
// address budget, a query form) fails here and not only when someone
// next measures.
func TestStatusWithDashboardsRounds(t *testing.T) {
	s := newStatusLoad(t)
	const d = 200 * time.Millisecond
	without := s.round(d)
	with, _ := s.withDashboards(d)
	if without == 0 || with == 0 {
		t.Fatalf("status answers: %d without dashboards, %d with, want some in each round", without, with)
	}
}
