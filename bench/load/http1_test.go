package load

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer answers every request it reads on a connection with the next
// of answers (the last one repeated), written as given, and closes the
// connection after an answer when closeAfter is set. It records each
// request's first line.
type rawServer struct {
	ln         net.Listener
	answers    []string
	closeAfter bool
	mu         sync.Mutex // guards lines
	lines      []string
	conns      atomic.Int64
	wg         sync.WaitGroup
}

func newRawServer(t *testing.T, closeAfter bool, answers ...string) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, answers: answers, closeAfter: closeAfter}
	s.wg.Go(s.accept)
	t.Cleanup(func() { _ = ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		s.wg.Go(func() { s.serve(c) })
	}
}

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for i := 0; ; i++ {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.mu.Lock()
		s.lines = append(s.lines, req.Method+" "+req.URL.RequestURI()+" "+req.Host)
		s.mu.Unlock()
		if _, err := io.WriteString(c, s.answers[min(i, len(s.answers)-1)]); err != nil || s.closeAfter {
			return
		}
	}
}

func (s *rawServer) target(t *testing.T) *Target {
	t.Helper()
	base, err := url.Parse("http://" + s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	tgt := NewTarget(NewClient(4, 5*time.Second), base, "r 1")
	t.Cleanup(tgt.Close)
	return tgt
}

const okJoin = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n{\"ticket\":\"tk-1\",\"number\":1234}"

func TestWireReadsAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		want   Ticket
		class  Class
	}{
		{"content length", okJoin, Ticket{Ticket: "tk-1", Number: 1234}, OK},
		{"header names in any case, spaces around values", "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:   31 \r\n\r\n{\"ticket\":\"tk-1\",\"number\":1234}", Ticket{Ticket: "tk-1", Number: 1234}, OK},
		{"chunked with extension and trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"a;x=y\r\n{\"ticket\":\r\n15\r\n\"tk-1\",\"number\":1234}\r\n0\r\nX-Trailer: 1\r\n\r\n", Ticket{Ticket: "tk-1", Number: 1234}, OK},
		{"interim answer skipped", "HTTP/1.1 100 Continue\r\n\r\n" + okJoin, Ticket{Ticket: "tk-1", Number: 1234}, OK},
		{"bare LF line endings", "HTTP/1.1 200 OK\nContent-Length: 31\n\n{\"ticket\":\"tk-1\",\"number\":1234}", Ticket{Ticket: "tk-1", Number: 1234}, OK},
		{"refusal", "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\n{}", Ticket{}, Class5xx},
		{"client error", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", Ticket{}, Class4xx},
		{"redirect", "HTTP/1.1 302 Found\r\nLocation: /\r\nContent-Length: 0\r\n\r\n", Ticket{}, Class3xx},
		{"no ticket", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", Ticket{}, ClassInvalid},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", Ticket{}, ClassInvalid},
		{"status not a number", "HTTP/1.1 2x0 OK\r\n\r\n", Ticket{}, ClassInvalid},
		{"status too small", "HTTP/1.1 042 Odd\r\n\r\n", Ticket{}, ClassInvalid},
		{"status line glued", "HTTP/1.1 200OK\r\n\r\n", Ticket{}, ClassInvalid},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", Ticket{}, ClassInvalid},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", Ticket{}, ClassInvalid},
		{"unknown transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", Ticket{}, ClassInvalid},
		{"header without colon", "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\n{}", Ticket{}, ClassInvalid},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", Ticket{}, ClassInvalid},
		{"chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n", Ticket{}, ClassInvalid},
		{"header line too long", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLine) + "\r\n\r\n", Ticket{}, ClassInvalid},
		{"too many header lines", "HTTP/1.1 200 OK\r\n" + strings.Repeat("X: 1\r\n", maxHeaderLines+1) + "\r\n", Ticket{}, ClassInvalid},
		{"body over the bound", "HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + strings.Repeat("a", 70000), Ticket{}, ClassInvalid},
		{"protocol switch", "HTTP/1.1 101 Switching Protocols\r\n\r\n", Ticket{}, ClassInvalid},
		{"cut in the body", "HTTP/1.1 200 OK\r\nContent-Length: 31\r\n\r\n{\"ticket\"", Ticket{}, ClassNetwork},
		{"cut in the head", "HTTP/1.1 200 OK\r\nContent-Le", Ticket{}, ClassNetwork},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, true, tc.answer)
			tk, c := srv.target(t).Join(context.Background(), true)
			if c != tc.class || tk != tc.want {
				t.Fatalf("got %+v, %q; want %+v, %q", tk, c, tc.want, tc.class)
			}
		})
	}
}

// The body without a length ends with the connection, which then cannot
// be reused.
func TestWireBodyUntilClose(t *testing.T) {
	srv := newRawServer(t, true, "HTTP/1.1 200 OK\r\n\r\n{\"ticket\":\"tk-2\",\"number\":7}")
	tgt := srv.target(t)
	for range 3 {
		if tk, c := tgt.Join(context.Background(), true); c != OK || tk.Ticket != "tk-2" {
			t.Fatalf("got %+v, %q", tk, c)
		}
	}
	if n := srv.conns.Load(); n != 3 {
		t.Fatalf("%d connections, want one a request", n)
	}
}

// Requests go over one kept connection, with the bytes a server expects.
func TestWireKeepsConnections(t *testing.T) {
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	srv := newRawServer(t, false, okJoin, chunked, "HTTP/1.1 204 No Content\r\n\r\n", okJoin)
	tgt := srv.target(t)
	ctx := context.Background()
	if tk, c := tgt.Join(ctx, true); c != OK || tk.Ticket != "tk-1" {
		t.Fatalf("join: %+v, %q", tk, c)
	}
	if c := tgt.Status(ctx, "a b+c"); c != OK {
		t.Fatalf("status: %q", c)
	}
	if c := tgt.Status(ctx, "x"); c != OK {
		t.Fatalf("status after 204: %q", c)
	}
	if _, c := tgt.Join(ctx, false); c != OK {
		t.Fatalf("join unread: %q", c)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
	host := srv.ln.Addr().String()
	want := []string{"POST /queue/r%201/join " + host, "GET /queue/r%201/status?ticket=a+b%2Bc " + host,
		"GET /queue/r%201/status?ticket=x " + host, "POST /queue/r%201/join " + host}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if strings.Join(srv.lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(srv.lines, "\n"), strings.Join(want, "\n"))
	}
}

// An answer that says Connection: close, or an HTTP/1.0 one, is not
// followed by another request on its connection; a kept connection the
// server closed meanwhile is replaced without an error.
func TestWireConnectionEnds(t *testing.T) {
	for _, tc := range []struct{ name, answer string }{
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n"},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, false, tc.answer)
			tgt := srv.target(t)
			for range 2 {
				if c := tgt.Status(context.Background(), "x"); c != OK {
					t.Fatal(c)
				}
			}
			if n := srv.conns.Load(); n != 2 {
				t.Fatalf("%d connections, want 2", n)
			}
		})
	}
	t.Run("closed while idle", func(t *testing.T) {
		// The server closes after each answer without saying so: the
		// next request finds the kept connection closed and is sent on a
		// new one.
		srv := newRawServer(t, true, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		tgt := srv.target(t)
		for i := range 3 {
			if c := tgt.Status(context.Background(), "x"); c != OK {
				t.Fatalf("request %d: %q", i, c)
			}
		}
	})
}

// A cancelled run interrupts the requests waiting for an answer at once,
// not at their timeout.
func TestWireAbortOnCancel(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	base, _ := url.Parse(srv.URL)
	tgt := NewTarget(NewClient(1, time.Hour), base, "r")
	defer tgt.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stop := tgt.abortOn(ctx)
	defer stop()
	done := make(chan Class, 1)
	go func() { _, c := tgt.Join(ctx, false); done <- c }()
	<-arrived
	cancel()
	if c := <-done; c != ClassCanceled {
		t.Fatalf("class %q, want %q", c, ClassCanceled)
	}
}

// The parser allocates nothing per answer on a kept connection.
func TestReadAnswerAllocations(t *testing.T) {
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nRetry-After: 5\r\nContent-Length: 31\r\n\r\n{\"ticket\":\"tk-1\",\"number\":1234}")
	rd := &repeatReader{b: answer}
	r := bufio.NewReaderSize(rd, maxLine)
	body := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		a, reuse, _, err := readAnswer(r, body[:0], true)
		if err != nil || !reuse || a.status != 200 || len(a.body) != 31 {
			t.Fatalf("%+v %v %v", a, reuse, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per answer", allocs)
	}
}

// repeatReader yields b over and over.
type repeatReader struct {
	b   []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.off:])
	r.off = (r.off + n) % len(r.b)
	return n, nil
}

func BenchmarkReadAnswer(b *testing.B) {
	answer := []byte("HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Type: application/json\r\nDate: Thu, 03 Dec 2026 18:00:00 GMT\r\nContent-Length: 31\r\n\r\n{\"ticket\":\"tk-1\",\"number\":1234}")
	r := bufio.NewReaderSize(&repeatReader{b: answer}, maxLine)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := readAnswer(r, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}
