package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/bench/histogram"
)

// RateChanger changes the rate of the room the sockets watch, so that the
// room pushes a frame carrying the new rate. It returns the instant the
// change was sent, from which push latency is measured.
type RateChanger interface {
	SetRate(ctx context.Context, ratePerMinute int) (sentAt time.Time, err error)
}

// Limits and defaults of a push run.
const (
	MaxSockets      = 50_000
	MaxChanges      = 1000
	DefaultSockets  = 100
	DefaultChanges  = 5
	dialParallelism = 32
)

// PushConfig is one ws run.
type PushConfig struct {
	// Sockets is the number of WebSockets opened, one ticket each.
	Sockets int
	// Changes is the number of rate changes measured, one after another.
	Changes int
	// BaseRate is the room's rate per minute before the first change;
	// change i sets BaseRate+i, so every change is a rate no frame carried
	// before.
	BaseRate int
	// Duration bounds the whole run; Wait bounds each change's wait for the
	// frame on every socket.
	Duration time.Duration
	Wait     time.Duration
	// OnRound, when set, receives each change's figures.
	OnRound func(Round)
	// Memory, when set, reads the server's memory around the opening of
	// the sockets.
	Memory MemoryReader
	// Gap is a pause before each change, so that each finds the room
	// quiet, as an operator's change does: a server may gather changes
	// that follow each other closely into one later frame.
	Gap time.Duration
}

// DefaultGap is the pause before each change: more than the server's
// gathering window (100 ms).
const DefaultGap = 250 * time.Millisecond

// Validate checks a push configuration against the limits.
func (c PushConfig) Validate() error {
	switch {
	case c.Sockets < 1 || c.Sockets > MaxSockets:
		return fmt.Errorf("sockets %d: want 1 to %d", c.Sockets, MaxSockets)
	case c.Changes < 1 || c.Changes > MaxChanges:
		return fmt.Errorf("changes %d: want 1 to %d", c.Changes, MaxChanges)
	case c.BaseRate < 1:
		return fmt.Errorf("base rate %d: want at least 1 per minute", c.BaseRate)
	case c.Duration <= 0 || c.Duration > MaxDuration:
		return fmt.Errorf("duration %v: want more than 0 and at most %v", c.Duration, MaxDuration)
	case c.Wait <= 0:
		return errors.New("wait: want more than 0")
	case c.Gap < 0 || c.Gap > time.Minute:
		return fmt.Errorf("gap %v: want 0 to 1m", c.Gap)
	}
	return nil
}

// Round is the outcome of one rate change.
type Round struct {
	// Index counts changes from 1.
	Index int
	// Rate is the rate per minute set by this change.
	Rate     int
	Received int
	Missing  int
	P50, P99 time.Duration
	// TimeToAll is the time from the change until the last socket had the
	// frame; 0 when some socket never got it.
	TimeToAll time.Duration
}

// round is the change being waited for; sockets read it on every frame.
type round struct {
	rate     float64
	base     time.Time      // monotonic reference for arrivals
	arrivals []atomic.Int64 // per socket: nanoseconds since base, plus 1; 0 = not yet
	all      *latch         // done when every open socket has the frame
}

// Push opens one WebSocket per ticket, then makes cfg.Changes rate changes
// through change and measures, for every socket, the time from the change
// to the first frame whose rate field is the new rate. A socket that could
// not be opened counts as ClassDial, a frame that did not come within
// cfg.Wait as ClassNoFrame. With cfg.Memory set, the server's memory is
// read before the sockets are opened and once they all had a first frame
// (Result.Memory).
func Push(ctx context.Context, t *Target, tickets []string, change RateChanger, cfg PushConfig) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if len(tickets) < cfg.Sockets {
		return Result{}, fmt.Errorf("push: %d tickets for %d sockets", len(tickets), cfg.Sockets)
	}
	deadline := time.Now().Add(cfg.Duration)
	s, err := OpenSockets(ctx, t, tickets[:cfg.Sockets], cfg)
	// OpenSockets always returns its sockets, those it opened before an
	// error too, so that their figures reach the result: close them either way.
	defer s.Close() //lint:ignore SA5001 s is never nil, see above

	if err != nil {
		return s.Result(), err
	}
	for i := 1; i <= cfg.Changes && time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		rd, err := s.Change(ctx, change, cfg.BaseRate+i)
		if err != nil {
			return s.Result(), err
		}
		if cfg.OnRound != nil {
			cfg.OnRound(rd)
		}
	}
	res := s.Result()
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("run interrupted: %w", err)
	}
	return res, nil
}

// Sockets are the open WebSockets of one push run. Change and Result are
// called from one goroutine.
type Sockets struct {
	cfg        PushConfig
	conns      []*websocket.Conn // nil where the dial failed
	dialFailed int
	current    atomic.Pointer[round]
	readers    sync.WaitGroup
	res        Result
	closeOnce  sync.Once
}

// OpenSockets opens one WebSocket per ticket and waits (at most cfg.Wait)
// until each had its first frame. With cfg.Memory set it reads the
// server's memory before and after. It fails only when no socket opened or
// a memory reading failed; the returned Sockets must be closed either way.
func OpenSockets(ctx context.Context, t *Target, tickets []string, cfg PushConfig) (*Sockets, error) {
	s := &Sockets{cfg: cfg, res: Result{
		Profile: ProfileWS, Mode: ModePush, Connections: len(tickets), Duration: cfg.Duration,
		Started: time.Now(), Latency: histogram.New(),
	}}
	var before Memory
	var gc bool
	if cfg.Memory != nil {
		var err error
		if before, gc, err = cfg.Memory.Memory(ctx, true); err != nil {
			return s, fmt.Errorf("push: memory before the sockets: %w", err)
		}
	}
	conns, dialFailed, dialErr := t.dialAll(ctx, tickets, cfg.Wait)
	s.conns, s.dialFailed = conns, dialFailed
	open := len(tickets) - dialFailed
	ready := newLatch(open)
	for i, c := range conns {
		if c == nil {
			continue
		}
		s.readers.Go(func() { readFrames(c, i, &s.current, ready) })
	}
	if open == 0 {
		s.res.Requests = int64(len(tickets))
		s.res.Errors = map[Class]int64{ClassDial: int64(dialFailed)}
		return s, fmt.Errorf("push: none of %d WebSockets could be opened: %w", len(tickets), dialErr)
	}
	// A socket is subscribed once it has had a first frame; a change made
	// before that could not reach it. Wait for that, but not forever: a
	// server may send its first frame only on its next tick.
	ready.wait(ctx, cfg.Wait)
	if cfg.Memory != nil {
		after, gc2, err := cfg.Memory.Memory(ctx, true)
		if err != nil {
			return s, fmt.Errorf("push: memory with the sockets open: %w", err)
		}
		s.res.Memory = &SocketMemory{Sockets: open, Before: before, After: after, GC: gc && gc2}
	}
	return s, nil
}

// Open reports how many sockets are open.
func (s *Sockets) Open() int { return len(s.conns) - s.dialFailed }

// Change waits the configured Gap, sets the room's rate to rate through
// change and waits (at most the configured Wait) until every open socket
// had a frame carrying it.
func (s *Sockets) Change(ctx context.Context, change RateChanger, rate int) (Round, error) {
	if s.cfg.Gap > 0 {
		t := time.NewTimer(s.cfg.Gap)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Round{}, ctx.Err()
		}
	}
	r := &round{rate: float64(rate), base: time.Now(), arrivals: make([]atomic.Int64, len(s.conns)), all: newLatch(s.Open())}
	s.current.Store(r)
	sentAt, err := change.SetRate(ctx, rate)
	if err != nil {
		s.current.Store(nil)
		return Round{}, fmt.Errorf("push: change to %d/min: %w", rate, err)
	}
	r.all.wait(ctx, s.cfg.Wait)
	s.current.Store(nil)

	rd := Round{Index: len(s.res.Rounds) + 1, Rate: rate}
	h := histogram.New()
	for j := range s.conns {
		if s.conns[j] == nil {
			s.res.add(ClassDial)
			continue
		}
		a := r.arrivals[j].Load()
		if a == 0 {
			rd.Missing++
			s.res.add(ClassNoFrame)
			continue
		}
		lat := max(r.base.Add(time.Duration(a-1)).Sub(sentAt), 0)
		h.Record(lat)
		rd.Received++
		s.res.add(OK)
	}
	s.res.Latency.Merge(h)
	rd.P50, rd.P99 = h.Quantile(0.5), h.Quantile(0.99)
	if rd.Missing == 0 && s.dialFailed == 0 {
		rd.TimeToAll = h.Max()
		s.res.TimeToAll = max(s.res.TimeToAll, rd.TimeToAll)
	}
	s.res.Rounds = append(s.res.Rounds, rd)
	return rd, nil
}

// Result returns the figures of the changes so far.
func (s *Sockets) Result() Result {
	r := s.res
	r.Elapsed = time.Since(r.Started)
	return r
}

// Close closes every socket and waits for their readers.
func (s *Sockets) Close() {
	s.closeOnce.Do(func() {
		for _, c := range s.conns {
			if c != nil {
				_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(100*time.Millisecond))
				_ = c.Close()
			}
		}
		s.readers.Wait()
	})
}

// dialAll opens a socket per ticket, a few at a time. A nil entry is a
// socket that could not be opened; it also returns how many failed and the
// first failure.
func (t *Target) dialAll(ctx context.Context, tickets []string, timeout time.Duration) ([]*websocket.Conn, int, error) {
	dialer := websocket.Dialer{HandshakeTimeout: timeout, Proxy: nil}
	conns := make([]*websocket.Conn, len(tickets))
	var failed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	sem := make(chan struct{}, dialParallelism)
	for i, tk := range tickets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, resp, err := dialer.DialContext(ctx, t.wsURL+url.QueryEscape(tk), http.Header{})
			if resp != nil && resp.Body != nil {
				_ = resp.Body.Close()
			}
			if err != nil {
				if resp != nil {
					err = fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
				}
				errOnce.Do(func() { firstErr = err })
				failed.Add(1)
				return
			}
			conns[i] = c
		})
	}
	wg.Wait()
	return conns, int(failed.Load()), firstErr
}

// readFrames reads socket i until it closes and marks the first frame of
// the current round that carries the round's rate.
func readFrames(c *websocket.Conn, i int, current *atomic.Pointer[round], ready *latch) {
	var frame struct {
		Rate *float64 `json:"rate"`
	}
	first := true
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		if first {
			ready.done()
			first = false
		}
		r := current.Load()
		if r == nil {
			continue
		}
		at := time.Since(r.base)
		frame.Rate = nil
		if json.Unmarshal(data, &frame) != nil || frame.Rate == nil || *frame.Rate != r.rate {
			continue
		}
		if r.arrivals[i].CompareAndSwap(0, int64(at)+1) {
			r.all.done()
		}
	}
}

// latch is closed once n parties are done.
type latch struct {
	remaining atomic.Int64
	ch        chan struct{}
}

func newLatch(n int) *latch {
	l := &latch{ch: make(chan struct{})}
	l.remaining.Store(int64(n))
	if n <= 0 {
		close(l.ch)
	}
	return l
}

func (l *latch) done() {
	if l.remaining.Add(-1) == 0 {
		close(l.ch)
	}
}

// wait returns when every party is done, timeout has passed or ctx ended.
func (l *latch) wait(ctx context.Context, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-l.ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// CheckFileLimit fails when opening sockets WebSockets (each an open file
// here, and one on the server) would pass this process's limit on open
// files, with what to do about it.
func CheckFileLimit(sockets int) error {
	limit, ok := FileLimit()
	need := uint64(sockets) + 64 // the HTTP client's connections, the runtime's own files
	if ok && need > limit {
		return fmt.Errorf("%d sockets need about %d open files, but this process may open %d (ulimit -n); raise the limit (and the server's) or open fewer sockets", sockets, need, limit)
	}
	return nil
}
