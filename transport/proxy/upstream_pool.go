package proxy

import (
	"bufio"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// connPool keeps a location's connections to a plain-HTTP upstream for
// the fast path's requests, which it writes and whose answers it reads
// with fasthttp's own request and answer types: unlike fasthttp's client
// with a streamed answer, it allocates nothing per request. It holds at
// most maxUpstreamConns connections; an idle one older than maxIdle is
// closed rather than reused.
type connPool struct {
	dial    fasthttp.DialFunc
	addr    string
	timeout time.Duration
	slots   chan struct{}
	mu      sync.Mutex
	idle    []*upConn
	// closed: the pool's handler is closed (a reload replaced it);
	// connections given back are closed.
	closed bool
}

// upConn is one connection to the upstream with its buffers.
type upConn struct {
	c    net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	last time.Time
}

func newConnPool(addr string, timeout time.Duration) *connPool {
	return &connPool{dial: deadlineDialer(timeout), addr: addr, timeout: timeout, slots: make(chan struct{}, maxUpstreamConns)}
}

var errNoFreeConn = errors.New("no free connection to the upstream")

// get returns an idle connection (reused) or a new one.
func (p *connPool) get() (uc *upConn, reused bool, err error) {
	now := time.Now()
	p.mu.Lock()
	for len(p.idle) > 0 {
		uc = p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if now.Sub(uc.last) < maxIdle {
			p.mu.Unlock()
			return uc, true, nil
		}
		p.mu.Unlock()
		p.discard(uc)
		p.mu.Lock()
	}
	p.mu.Unlock()
	select {
	case p.slots <- struct{}{}:
	default:
		t := time.NewTimer(p.timeout)
		defer t.Stop()
		select {
		case p.slots <- struct{}{}:
		case <-t.C:
			return nil, false, errNoFreeConn
		}
	}
	c, err := p.dial(p.addr)
	if err != nil {
		<-p.slots
		return nil, false, err
	}
	return &upConn{c: c, br: bufio.NewReaderSize(c, maxAnswerHeader), bw: bufio.NewWriterSize(c, 4<<10)}, false, nil
}

// put keeps uc for the next request, and closes the connections kept
// longer than maxIdle (the oldest first: the newest are used first).
func (p *connPool) put(uc *upConn) {
	uc.last = time.Now()
	var stale []*upConn
	p.mu.Lock()
	n := 0
	for n < len(p.idle) && uc.last.Sub(p.idle[n].last) >= maxIdle {
		n++
	}
	if n > 0 {
		stale = append(stale, p.idle[:n]...)
		p.idle = append(p.idle[:0], p.idle[n:]...)
	}
	if p.closed {
		stale = append(stale, uc)
	} else {
		p.idle = append(p.idle, uc)
	}
	p.mu.Unlock()
	for _, s := range stale {
		p.discard(s)
	}
}

// discard closes uc and frees its slot.
func (p *connPool) discard(uc *upConn) {
	_ = uc.c.Close()
	<-p.slots
}

// do sends req and reads the head of its answer into resp, whose body is
// then a stream on the connection returned: the caller gives it back
// with done once the body is read or abandoned. A reused connection that
// fails before any answer (the upstream closed it while idle) is replaced
// once: the fast path's requests are GETs.
func (p *connPool) do(req *fasthttp.Request, resp *fasthttp.Response) (*upConn, error) {
	for attempt := 0; ; attempt++ {
		uc, reused, err := p.get()
		if err != nil {
			return nil, err
		}
		if err = req.Write(uc.bw); err == nil {
			err = uc.bw.Flush()
		}
		if err == nil {
			resp.StreamBody = true
			err = resp.Read(uc.br)
		}
		if err == nil {
			return uc, nil
		}
		p.discard(uc)
		if !reused || attempt > 0 || isTimeout(err) {
			return nil, err
		}
		resp.Reset()
	}
}

// done gives uc back once resp's body stream was read to its end (whole),
// or closes it: a connection with an answer's rest unread, or one the
// answer said to close or that ends with the body, is not reused.
func (p *connPool) done(uc *upConn, resp *fasthttp.Response, whole bool) {
	reuse := whole && !resp.ConnectionClose() && resp.Header.ContentLength() != -2
	_ = resp.CloseBodyStream()
	if reuse {
		p.put(uc)
	} else {
		p.discard(uc)
	}
}

// close closes the idle connections, and those given back from now on.
func (p *connPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, uc := range idle {
		p.discard(uc)
	}
}

// closePools closes the fast path's connection pools of every location.
func (h *Handler) closePools() {
	for _, routes := range h.hosts {
		for _, rt := range routes {
			if f, ok := rt.fast.(*fastForwarder); ok && f.pool != nil {
				f.pool.close()
			}
		}
	}
}
