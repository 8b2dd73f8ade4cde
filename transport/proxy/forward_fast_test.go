package proxy

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// deadlineCount counts the deadlines set on a connection.
type deadlineCount struct {
	net.Conn
	n atomic.Int64
}

func (c *deadlineCount) SetDeadline(t time.Time) error {
	c.n.Add(1)
	return c.Conn.SetDeadline(t)
}

func (c *deadlineCount) SetReadDeadline(t time.Time) error {
	c.n.Add(1)
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineCount) SetWriteDeadline(t time.Time) error {
	c.n.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

// upstreamPipe is an upstream connection of timeout and its far end.
func upstreamPipe(t *testing.T, timeout time.Duration) (*deadlineConn, *deadlineCount, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	cnt := &deadlineCount{Conn: a}
	return &deadlineConn{Conn: cnt, timeout: timeout}, cnt, b
}

// TestUpstreamDeadlineArmedOnce: the requests of a kept-alive upstream
// connection, each a write and a read, arm its deadline once rather than
// once per read and write (a runtime timer update each).
func TestUpstreamDeadlineArmedOnce(t *testing.T) {
	c, cnt, far := upstreamPipe(t, time.Minute)
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := far.Read(b); err != nil {
				return
			}
			if _, err := far.Write(b); err != nil {
				return
			}
		}
	}()
	b := make([]byte, 1)
	for i := range 100 {
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(b); err != nil || b[0] != byte(i) {
			t.Fatalf("read %v, %v", b, err)
		}
	}
	if n := cnt.n.Load(); n != 1 {
		t.Fatalf("%d deadlines set for 100 writes and reads within a second, want 1", n)
	}
}

// TestUpstreamDeadlineCutsSilence: an upstream silent for the timeout is
// cut, not before the timeout and at most an eighth after it (with a
// margin for a loaded machine); one that keeps sending, each piece within
// the timeout, is read to its end however long it takes in all.
func TestUpstreamDeadlineCutsSilence(t *testing.T) {
	const timeout = 300 * time.Millisecond
	c, _, far := upstreamPipe(t, timeout)
	go func() {
		for range 6 {
			time.Sleep(timeout / 3)
			if _, err := far.Write([]byte{1}); err != nil {
				return
			}
		}
	}()
	b := make([]byte, 1)
	start := time.Now()
	for i := range 6 {
		if _, err := c.Read(b); err != nil {
			t.Fatalf("moving stream cut at piece %d after %v: %v", i, time.Since(start), err)
		}
	}
	if d := time.Since(start); d <= timeout {
		t.Fatalf("the stream took %v, want it longer than the timeout", d)
	}
	silent := time.Now()
	_, err := c.Read(b)
	d := time.Since(silent)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("silent upstream: %v after %v, want a timeout", err, d)
	}
	if d < timeout || d > timeout*9/8+time.Second {
		t.Fatalf("silent upstream cut after %v, want %v to %v", d, timeout, timeout*9/8)
	}
}

// TestUpstreamDeadlineAfterCleared: a deadline cleared from outside (as
// fasthttp's TLS handshake does once done) is armed again by the next
// read, so a silent upstream is still cut.
func TestUpstreamDeadlineAfterCleared(t *testing.T) {
	const timeout = 100 * time.Millisecond
	c, _, far := upstreamPipe(t, timeout)
	go func() { _, _ = far.Write([]byte{1}) }()
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Read(b); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("silent upstream: %v, want a timeout", err)
		}
	case <-time.After(10 * timeout):
		t.Fatal("a silent upstream was not cut once the deadline was cleared")
	}
}
