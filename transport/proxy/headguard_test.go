package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// bareLFBlocks are header blocks fasthttp's parser alone would wait on
// until its read timeout.
var bareLFBlocks = []string{
	"GET /lf HTTP/1.1\nHost: shop.test\n\n",
	"GET /lf HTTP/1.1\r\nHost: shop.test\r\n\n",
	"GET /lf HTTP/1.1\r\nHost: shop.test\n\r\n",
}

// TestFastServerAnswersBareLFAtOnce: the fast server as the proxy
// listener serves it (its 10 s read timeout untouched) answers a header
// block ended by a bare LF 400 and closes, long before that timeout: the
// read deadline of 2 s fails the test if the answer waits for it.
func TestFastServerAnswersBareLFAtOnce(t *testing.T) {
	rig := newFastRig(t, "")
	s := rig.h.FastServer()
	if s.ReadTimeout < 5*time.Second {
		t.Fatalf("the server's read timeout is %v: the test needs it longer than its deadline", s.ReadTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(FastListener(ln))
	defer s.Shutdown()
	for _, req := range bareLFBlocks {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: no answer before the deadline: %v", req, err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "CRLF") {
			t.Errorf("%q: answered %d %q, want 400 naming CRLF", req, res.StatusCode, body)
		}
		if _, err := br.ReadByte(); err != io.EOF && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%q: after the answer: %v, want the connection closed", req, err)
		} else if err != io.EOF {
			t.Errorf("%q: the connection stayed open", req)
		}
		c.Close()
	}
}

// TestHeadWatchSplit: the watch decides the same wherever the reads cut
// a block, and stops at a CRLFCRLF whatever follows it.
func TestHeadWatchSplit(t *testing.T) {
	cases := []struct {
		in string
		ok bool
		// inHead: still reading the block after in.
		inHead bool
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true, false},
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n\n\n", true, false},
		{"GET / HTTP/1.1\nHost: a\r\n\r\n", true, false},
		{"\r\n\nGET / HTTP/1.1\r\nHost: a\r\n", true, true},
		{"GET / HTTP/1.1\r\nHost: a\r\n", true, true},
		{"GET / HTTP/1.1\r\nX: a\r\r\n", true, true},
		{"GET / HTTP/1.1\nHost: a\n\n", false, true},
		{"GET / HTTP/1.1\r\nHost: a\r\n\n", false, true},
		{"GET / HTTP/1.1\r\nHost: a\n\r\n", false, true},
		{"GET / HTTP/1.1\r\n\n", false, true},
	}
	for _, c := range cases {
		for cut := 0; cut <= len(c.in); cut++ {
			for step := 1; step <= len(c.in); step++ {
				w := headWatch{inHead: true}
				ok := feed(&w, c.in[:cut], step) && feed(&w, c.in[cut:], step)
				if ok != c.ok || ok && w.inHead != c.inHead {
					t.Fatalf("%q cut at %d in reads of %d: ok %v, reading the block %v; want %v, %v", c.in, cut, step, ok, w.inHead, c.ok, c.inHead)
				}
			}
		}
	}
}

// feed reads s into w in reads of step bytes, as headConn does.
func feed(w *headWatch, s string, step int) bool {
	for len(s) > 0 && w.inHead {
		n := min(step, len(s))
		if !w.scan([]byte(s[:n])) {
			return false
		}
		s = s[n:]
	}
	return true
}

// TestHeadConnInterim: 100 Continue leaves the watch off (the body comes
// next); a final answer starts the next block's; after 101 the
// connection is a tunnel, and no write (a WebSocket frame from the
// upstream, whatever its bytes) turns the watch on again.
func TestHeadConnInterim(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &headConn{Conn: a, watch: headWatch{inHead: true}}
	const block = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	go func() {
		_, _ = io.WriteString(b, block)
		_, _ = io.Copy(io.Discard, b)
	}()
	if _, err := io.ReadFull(c, make([]byte, len(block))); err != nil || c.watch.inHead {
		t.Fatalf("reading the block: %v, still in it %v", err, c.watch.inHead)
	}
	for _, w := range []struct {
		answer string
		inHead bool
	}{{"HTTP/1.1 100 Continue\r\n\r\n", false}, {"HTTP/1.1 200 OK\r\n\r\n", true}, {"HTTP/1.1 101 Switching Protocols\r\n\r\n", false},
		{"\x81\x02hi", false}, {"HTTP/1.1 200 OK\r\n\r\n", false}} {
		if _, err := io.WriteString(c, w.answer); err != nil {
			t.Fatal(err)
		}
		if c.watch.inHead != w.inHead {
			t.Fatalf("after %q: watching %v, want %v", w.answer, c.watch.inHead, w.inHead)
		}
	}
}

// BenchmarkHeadWatch is the watch's cost on an admitted visitor's head
// (about 400 bytes, 9 lines) read at once.
func BenchmarkHeadWatch(b *testing.B) {
	head := []byte("GET /product/42?ref=home HTTP/1.1\r\nHost: shop.test\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36\r\n" +
		"Accept: text/html,application/xhtml+xml\r\nAccept-Language: en-GB,en;q=0.9\r\nAccept-Encoding: gzip, br\r\n" +
		"Cookie: aq_0123456789ab=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\nConnection: keep-alive\r\n\r\n")
	b.SetBytes(int64(len(head)))
	b.ReportAllocs()
	for b.Loop() {
		w := headWatch{inHead: true}
		if !w.scan(head) || w.inHead {
			b.Fatal("head not read")
		}
	}
}
