package proxy

import (
	"bytes"
	"errors"
	"net"
	"sync/atomic"
)

// fasthttp's parser takes a header block as ended only by CRLFCRLF: a
// block whose blank line is a bare LF ("\n\n", "\r\n\n", "\n\r\n") never
// ends for it, and the request waits for more bytes until the read
// timeout (10 s) refuses it, holding one of the server's connections all
// along, where net/http reads it at once. The fast server is therefore
// served through FastListener, whose connections watch the bytes of each
// header block as they come: a blank line that is not a CRLF after a
// CRLF ends the read with errBareLF, which the server answers 400 at
// once. A request that never ends its block in either way still waits
// for the timeout, as it does on any server.
//
// The watch covers the block a connection opens with and the block after
// each answer (the bytes read once a final answer has been written);
// bytes past a block's CRLFCRLF, a body or a request pipelined behind the
// first one, are not read, so a bare-LF block pipelined behind another
// request in one write still waits for the timeout. Interim answers (100
// Continue) do not start a new block, so the body that follows is never
// read as headers; after 101 Switching Protocols nothing is (a WebSocket
// tunnel).

// errBareLF is a header block ended by a blank line that is not CRLF
// after a CRLF.
var errBareLF = errors.New("the header block ends with a bare LF (lines must end in CRLF)")

// FastListener is ln with each connection watched for header blocks
// fasthttp's parser would wait on (see errBareLF): the listener the fast
// visitor server must serve.
func FastListener(ln net.Listener) net.Listener { return headListener{ln} }

type headListener struct{ net.Listener }

func (l headListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headConn{Conn: c, watch: headWatch{inHead: true}}, nil
}

// headConn is a visitor connection whose header blocks are watched.
// fasthttp reads and writes a connection from one goroutine at a time.
type headConn struct {
	net.Conn
	watch headWatch
	// failed is set once a block ended with a bare LF: the bytes read
	// are handed on, and the next read fails.
	failed bool
	// tunnel is set by a 101 answer: the connection carries another
	// protocol from then on, never read as headers again, and is read and
	// written from two goroutines at once (the tunnel's two directions):
	// the watch's state is touched no more.
	tunnel atomic.Bool
}

func (c *headConn) Read(p []byte) (int, error) {
	if c.tunnel.Load() {
		return c.Conn.Read(p)
	}
	if c.failed {
		return 0, errBareLF
	}
	n, err := c.Conn.Read(p)
	if n > 0 && c.watch.inHead && !c.watch.scan(p[:n]) {
		c.failed = true
	}
	return n, err
}

func (c *headConn) Write(p []byte) (int, error) {
	if c.tunnel.Load() {
		return c.Conn.Write(p)
	}
	switch interim(p) {
	case "101":
		c.watch = headWatch{}
		c.tunnel.Store(true)
	case "":
		c.watch = headWatch{inHead: true}
	}
	return c.Conn.Write(p)
}

// interim returns the status of the interim (1xx) answer p begins, ""
// if it begins none.
func interim(p []byte) string {
	if len(p) >= 12 && bytes.HasPrefix(p, []byte("HTTP/1.")) && p[8] == ' ' && p[9] == '1' {
		return string(p[9:12])
	}
	return ""
}

// headWatch follows one header block across reads, line by line.
type headWatch struct {
	// inHead: the bytes read are a header block's (false once it ended).
	inHead bool
	// started: a line with content was read (blank lines before the
	// request line are allowed, as fasthttp skips them).
	started bool
	// lineLen is how many bytes of the current line were read; lastCR
	// whether the last of them is a CR.
	lineLen int
	lastCR  bool
	// crlf: the last line ended with CRLF.
	crlf bool
}

// scan reads b, the next bytes of the block, and reports false if the
// block ended with a bare LF; past a CRLFCRLF it stops reading.
func (w *headWatch) scan(b []byte) bool {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.lineLen += len(b)
			w.lastCR = b[len(b)-1] == '\r'
			return true
		}
		if i > 0 {
			w.lineLen += i
			w.lastCR = b[i-1] == '\r'
		}
		b = b[i+1:]
		cr := w.lineLen > 0 && w.lastCR
		blank := w.lineLen == 0 || w.lineLen == 1 && cr
		w.lineLen, w.lastCR = 0, false
		switch {
		case !blank:
			w.started, w.crlf = true, cr
		case !w.started:
		case cr && w.crlf:
			w.inHead = false
			return true
		default:
			return false
		}
	}
	return true
}
