package floor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/load"
)

// Remote steers a floor Server, in this process or another, through its
// control paths. It is a load.RateChanger and a load.MemoryReader.
type Remote struct {
	client *http.Client
	base   *url.URL
	// gc allows Memory to collect garbage first; the comparison sets it
	// only when the real server can be made to collect too.
	gc bool
}

// NewRemote addresses the floor at base through client.
func NewRemote(client *http.Client, base *url.URL) *Remote {
	return &Remote{client: client, base: base, gc: true}
}

// URL returns the floor's base URL.
func (r *Remote) URL() *url.URL { return r.base }

func (r *Remote) do(ctx context.Context, method, path string, body io.Reader, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.base.String()+path, body)
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("floor %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("floor %s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// SetStatus makes the floor answer status with body and Retry-After
// retryAfter.
func (r *Remote) SetStatus(ctx context.Context, body []byte, retryAfter string) error {
	return r.do(ctx, http.MethodPut, "/floor/status?retryAfter="+url.QueryEscape(retryAfter), strings.NewReader(string(body)), nil)
}

// SetJoin makes the floor answer joins with body.
func (r *Remote) SetJoin(ctx context.Context, body []byte) error {
	return r.do(ctx, http.MethodPut, "/floor/join", strings.NewReader(string(body)), nil)
}

// SetRate makes the floor push a frame carrying ratePerMinute to every
// socket. The instant returned is taken before the request leaves, as the
// real side's is taken before its PATCH leaves.
func (r *Remote) SetRate(ctx context.Context, ratePerMinute int) (time.Time, error) {
	sentAt := time.Now()
	return sentAt, r.do(ctx, http.MethodPost, "/floor/rate?rate="+strconv.Itoa(ratePerMinute), nil, nil)
}

// Memory reads the floor process's memory.
func (r *Remote) Memory(ctx context.Context, gc bool) (load.Memory, bool, error) {
	var m memoryAnswer
	path := "/floor/memory"
	if gc && r.gc {
		path += "?gc=1"
	}
	if err := r.do(ctx, http.MethodGet, path, nil, &m); err != nil {
		return load.Memory{}, false, err
	}
	return m.Memory, m.GC, nil
}

// Process is a floor Server running in a child process, so that it has a
// Go runtime, a scheduler and a heap of its own, as the real server does,
// and its memory is its own.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
	url   *url.URL
}

// listeningPrefix starts the line a floor child prints once it listens.
const listeningPrefix = "floor listening on "

// StartProcess starts name with args (a command that runs ServeChild,
// such as "aditus-queue bench floor-server") with env added to this
// process's environment, and waits until it listens. The child ends when
// Close closes its standard input, or by itself after its lifetime.
func StartProcess(ctx context.Context, name string, args, env []string, stderr io.Writer) (*Process, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(cmd.Environ(), env...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the floor process: %w", err)
	}
	p := &Process{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	t := time.NewTimer(15 * time.Second)
	defer t.Stop()
	select {
	case line, ok := <-lines:
		u, perr := url.Parse(strings.TrimPrefix(line, listeningPrefix))
		if ok && perr == nil && strings.HasPrefix(line, listeningPrefix) && u.Host != "" {
			p.url = u
			return p, nil
		}
		_ = p.Close()
		return nil, fmt.Errorf("the floor process did not start: it said %q", line)
	case <-t.C:
		_ = p.Close()
		return nil, errors.New("the floor process did not start within 15s")
	case <-ctx.Done():
		_ = p.Close()
		return nil, ctx.Err()
	}
}

// URL returns the child's base URL.
func (p *Process) URL() *url.URL { return p.url }

// Close ends the child: its standard input closes, and it is killed if it
// has not ended a few seconds later.
func (p *Process) Close() error {
	_ = p.stdin.Close()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-p.done:
		return exitErr(err)
	case <-t.C:
		_ = p.cmd.Process.Kill()
		return exitErr(<-p.done)
	}
}

func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 0 {
		return nil
	}
	return err
}

// ServeChild is the floor child's main: it serves a floor on addr, writes
// the listening line to stdout, and returns once stdin reaches its end
// (the parent closed it or died), ctx ends or lifetime has passed.
func ServeChild(ctx context.Context, addr string, stdin io.Reader, stdout io.Writer, lifetime time.Duration) error {
	s, err := NewServer(addr)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := fmt.Fprintln(stdout, listeningPrefix+s.URL().String()); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	t := time.NewTimer(lifetime)
	defer t.Stop()
	select {
	case <-eof:
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}
