package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"
)

// The load client of the measured requests: HTTP/1.1 over keep-alive
// connections, at about the cost of a C client. A request is written from
// bytes built once (and, for a status poll, the ticket between them); of
// the answer it reads the status line, the three headers that frame the
// body (Content-Length, Transfer-Encoding, Connection) and the body itself,
// which it discards unless asked for it. Nothing is allocated per request
// on a reused connection. net/http's client, by comparison, costs two
// goroutines per connection, a channel hand-off per request and a parsed
// header map per answer, which on a small machine made the client, not the
// server, the limit of a run.

// Bounds on what a server may send.
const (
	// maxLine bounds the status line and each header line.
	maxLine = 4096
	// maxHeaderLines bounds the header lines of one answer.
	maxHeaderLines = 100
	// maxKeptBody bounds a body the caller asks for.
	maxKeptBody = 1 << 16
	// maxInterim bounds the 1xx answers skipped before the final one.
	maxInterim = 8
	// maxIdleConns bounds the connections kept open between requests.
	maxIdleConns = MaxConnections
)

// errMalformed marks an answer that is not HTTP/1.1 as this client reads
// it.
var errMalformed = errors.New("malformed HTTP answer")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// wire is a pool of keep-alive connections to one host.
type wire struct {
	addr    string
	tls     *tls.Config // nil for plain HTTP
	timeout time.Duration

	mu   sync.Mutex // guards idle and live
	idle []*hconn
	// live holds every open connection, so that a cancelled run can
	// interrupt the ones waiting for an answer.
	live map[*hconn]struct{}
}

// hconn is one connection with its buffers.
type hconn struct {
	c    net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	body []byte // reused for kept bodies
}

func newWire(addr string, tlsConfig *tls.Config, timeout time.Duration) *wire {
	return &wire{addr: addr, tls: tlsConfig, timeout: timeout, live: map[*hconn]struct{}{}}
}

// request is one request's bytes: head, then mid (a ticket, say), then
// tail.
type request struct {
	head []byte
	mid  string
	tail []byte
}

// answer is what the client reads of a response.
type answer struct {
	status int
	// body is set only when asked for.
	body []byte
}

// do sends rq and reads its answer, keeping the body when keepBody is set. A connection that
// was idle and turns out closed before any byte of the answer came is
// replaced once, since the server did not read the request.
func (wr *wire) do(ctx context.Context, rq request, keepBody bool) (answer, error) {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return answer{}, err
		}
		hc, reused, err := wr.get(ctx)
		if err != nil {
			return answer{}, err
		}
		a, reuse, started, err := wr.roundTrip(ctx, hc, rq, keepBody)
		if a.body != nil {
			// The connection's buffer goes back with it to the pool.
			a.body = bytes.Clone(a.body)
		}
		if err == nil && reuse {
			wr.put(hc)
		} else {
			wr.close(hc)
		}
		if err != nil && reused && !started && attempt == 0 && isStale(err) {
			continue
		}
		return a, err
	}
}

// isStale reports whether err is how a connection the server has closed
// answers.
func isStale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (wr *wire) roundTrip(ctx context.Context, hc *hconn, rq request, keepBody bool) (a answer, reuse, started bool, err error) {
	if err := hc.c.SetDeadline(time.Now().Add(wr.timeout)); err != nil {
		return answer{}, false, false, err
	}
	if err := ctx.Err(); err != nil {
		// Cancelled between taking the connection and setting its
		// deadline, which the cancellation may have missed.
		return answer{}, false, false, err
	}
	_, _ = hc.w.Write(rq.head)
	_, _ = hc.w.WriteString(rq.mid)
	_, _ = hc.w.Write(rq.tail)
	if err := hc.w.Flush(); err != nil {
		return answer{}, false, false, err
	}
	var keep []byte
	if keepBody {
		keep = hc.body[:0]
	}
	a, reuse, started, err = readAnswer(hc.r, keep, keepBody)
	if keepBody && cap(a.body) > cap(hc.body) {
		hc.body = a.body[:0]
	}
	return a, reuse, started, err
}

// get takes an idle connection or dials a new one.
func (wr *wire) get(ctx context.Context) (*hconn, bool, error) {
	wr.mu.Lock()
	if n := len(wr.idle); n > 0 {
		hc := wr.idle[n-1]
		wr.idle[n-1] = nil
		wr.idle = wr.idle[:n-1]
		wr.mu.Unlock()
		return hc, true, nil
	}
	wr.mu.Unlock()
	hc, err := wr.dial(ctx)
	return hc, false, err
}

func (wr *wire) dial(ctx context.Context) (*hconn, error) {
	d := net.Dialer{Timeout: wr.timeout, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", wr.addr)
	if err != nil {
		return nil, err
	}
	if wr.tls != nil {
		tc := tls.Client(c, wr.tls)
		hctx, cancel := context.WithTimeout(ctx, wr.timeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c = tc
	}
	hc := &hconn{c: c, r: bufio.NewReaderSize(c, maxLine), w: bufio.NewWriterSize(c, maxLine)}
	wr.mu.Lock()
	wr.live[hc] = struct{}{}
	wr.mu.Unlock()
	return hc, nil
}

// put returns a connection to the idle pool, or closes it beyond the pool's
// bound.
func (wr *wire) put(hc *hconn) {
	wr.mu.Lock()
	if len(wr.idle) < maxIdleConns {
		wr.idle = append(wr.idle, hc)
		wr.mu.Unlock()
		return
	}
	wr.mu.Unlock()
	wr.close(hc)
}

func (wr *wire) close(hc *hconn) {
	wr.mu.Lock()
	delete(wr.live, hc)
	wr.mu.Unlock()
	_ = hc.c.Close()
}

// warm opens connections until n are idle.
func (wr *wire) warm(ctx context.Context, n int) error {
	wr.mu.Lock()
	missing := n - len(wr.idle)
	wr.mu.Unlock()
	for range missing {
		hc, err := wr.dial(ctx)
		if err != nil {
			return err
		}
		wr.put(hc)
	}
	return nil
}

// closeIdle closes the idle connections.
func (wr *wire) closeIdle() {
	wr.mu.Lock()
	idle := wr.idle
	wr.idle = nil
	wr.mu.Unlock()
	for _, hc := range idle {
		wr.close(hc)
	}
}

// abortOn interrupts the requests waiting for an answer when ctx ends,
// until the returned stop is called.
func (wr *wire) abortOn(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		wr.mu.Lock()
		defer wr.mu.Unlock()
		for hc := range wr.live {
			_ = hc.c.SetDeadline(time.Unix(1, 0))
		}
	})
}

// readAnswer reads one final answer from r, skipping interim (1xx) ones.
// With keepBody, the body is appended to body (at most maxKeptBody bytes);
// otherwise it is discarded. reuse reports whether the connection may carry
// another request; started whether any byte of an answer came.
func readAnswer(r *bufio.Reader, body []byte, keepBody bool) (a answer, reuse, started bool, err error) {
	for range maxInterim + 1 {
		h, err := readHead(r, started)
		if err != nil {
			return answer{}, false, started || h.started, err
		}
		started = true
		if h.status == 101 {
			return answer{}, false, true, malformed("unexpected protocol switch")
		}
		if h.status < 200 {
			continue
		}
		a = answer{status: h.status}
		a.body, err = readBody(r, h, body, keepBody)
		framed := h.length >= 0 || h.chunked || h.status == 204 || h.status == 304
		return a, err == nil && h.keepAlive && framed, true, err
	}
	return answer{}, false, true, malformed("more than %d interim answers", maxInterim)
}

// head is what the client keeps of a status line and headers.
type head struct {
	status    int
	length    int64 // -1: not given
	chunked   bool
	keepAlive bool
	started   bool
}

// readHead reads a status line and the header lines after it.
func readHead(r *bufio.Reader, started bool) (head, error) {
	h := head{length: -1}
	line, err := readLine(r)
	if err != nil {
		if started && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return h, err
	}
	h.started = true
	// "HTTP/1.1 200 OK": version, space, three digits, then a space or
	// the end.
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || (line[7] != '1' && line[7] != '0') || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return h, malformed("status line %.40q", line)
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return h, malformed("status line %.40q", line)
		}
		h.status = h.status*10 + int(d-'0')
	}
	if h.status < 100 {
		return h, malformed("status %d", h.status)
	}
	h.keepAlive = line[7] == '1'
	for range maxHeaderLines {
		line, err := readLine(r)
		if err != nil {
			return h, unexpected(err)
		}
		if len(line) == 0 {
			if h.chunked {
				h.length = -1
			}
			return h, nil
		}
		if err := h.header(line); err != nil {
			return h, err
		}
	}
	return h, malformed("more than %d header lines", maxHeaderLines)
}

// header reads one header line into h.
func (h *head) header(line []byte) error {
	colon := -1
	for i, c := range line {
		if c == ':' {
			colon = i
			break
		}
	}
	if colon <= 0 {
		return malformed("header line %.40q", line)
	}
	name, value := line[:colon], trimSpace(line[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		n, ok := parseDecimal(value)
		if !ok || (h.length >= 0 && h.length != n) {
			return malformed("Content-Length %.40q", value)
		}
		h.length = n
	case equalFold(name, "transfer-encoding"):
		if !equalFold(value, "chunked") {
			return malformed("Transfer-Encoding %.40q", value)
		}
		h.chunked = true
	case equalFold(name, "connection"):
		if hasToken(value, "close") {
			h.keepAlive = false
		} else if hasToken(value, "keep-alive") {
			h.keepAlive = true
		}
	}
	return nil
}

// readBody reads the body h frames.
func readBody(r *bufio.Reader, h head, body []byte, keepBody bool) ([]byte, error) {
	switch {
	case h.status == 204 || h.status == 304:
		return body, nil
	case h.chunked:
		return readChunked(r, body, keepBody)
	case h.length >= 0:
		return readN(r, body, keepBody, h.length)
	}
	// Neither length nor chunks: the body ends with the connection.
	if !keepBody {
		_, err := r.WriteTo(io.Discard)
		return nil, err
	}
	return readToEOF(r, body)
}

func readN(r *bufio.Reader, body []byte, keepBody bool, n int64) ([]byte, error) {
	if !keepBody {
		for n > 0 {
			step := int(min(n, 1<<30))
			d, err := r.Discard(step)
			n -= int64(d)
			if err != nil {
				return nil, unexpected(err)
			}
		}
		return nil, nil
	}
	if int64(len(body))+n > maxKeptBody {
		return nil, malformed("body longer than %d bytes", maxKeptBody)
	}
	start := len(body)
	body = slices.Grow(body, int(n))[:start+int(n)]
	if _, err := io.ReadFull(r, body[start:]); err != nil {
		return nil, unexpected(err)
	}
	return body, nil
}

func readToEOF(r *bufio.Reader, body []byte) ([]byte, error) {
	for {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		n, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if len(body) > maxKeptBody {
			return nil, malformed("body longer than %d bytes", maxKeptBody)
		}
		if errors.Is(err, io.EOF) {
			return body, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readChunked reads a chunked body and its trailer.
func readChunked(r *bufio.Reader, body []byte, keepBody bool) ([]byte, error) {
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, unexpected(err)
		}
		size, ok := parseChunkSize(line)
		if !ok {
			return nil, malformed("chunk size %.40q", line)
		}
		if size == 0 {
			return body, skipTrailer(r)
		}
		if body, err = readN(r, body, keepBody, size); err != nil {
			return nil, err
		}
		line, err = readLine(r)
		if err != nil {
			return nil, unexpected(err)
		}
		if len(line) != 0 {
			return nil, malformed("chunk longer than its size")
		}
	}
}

func skipTrailer(r *bufio.Reader) error {
	for range maxHeaderLines {
		line, err := readLine(r)
		if err != nil {
			return unexpected(err)
		}
		if len(line) == 0 {
			return nil
		}
	}
	return malformed("more than %d trailer lines", maxHeaderLines)
}

// readLine reads one CRLF- or LF-ended line, without its ending; the
// slice is valid until the next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, malformed("line longer than %d bytes", maxLine)
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// unexpected turns an end of input inside an answer into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseChunkSize reads a chunk-size line: hex digits, then optional
// extensions after ';'.
func parseChunkSize(line []byte) (int64, bool) {
	for i, c := range line {
		if c == ';' || c == ' ' || c == '\t' {
			line = line[:i]
			break
		}
	}
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares b with the lower-case ASCII s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token
// (lower-case), ignoring case and spaces.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if equalFold(trimSpace(v[:i]), token) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}
