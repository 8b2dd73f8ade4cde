package load

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Target is one room of a server under test, as visitors reach it. The
// measured requests (joins and status polls) go over its own keep-alive
// connections (http1.go); the rest over the given http.Client.
type Target struct {
	client    *http.Client
	wire      *wire
	join      request
	status    request // the ticket goes in mid
	joinURL   string
	statusURL string // without the ticket value
	wsURL     string // without the ticket value
}

// NewTarget addresses room slug on base (scheme://host[:port], already
// checked against the loopback guard) through client, whose timeout bounds
// every request (DefaultTimeout when it has none).
func NewTarget(client *http.Client, base *url.URL, slug string) *Target {
	room := strings.TrimSuffix(base.String(), "/") + "/queue/" + url.PathEscape(slug)
	ws := "ws" + strings.TrimPrefix(room, "http")
	timeout := client.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	path := strings.TrimSuffix(base.EscapedPath(), "/") + "/queue/" + url.PathEscape(slug)
	headers := " HTTP/1.1\r\nHost: " + base.Host + "\r\nUser-Agent: aditus-queue-bench\r\n"
	return &Target{
		client:    client,
		wire:      newWire(hostPort(base), tlsFor(base), timeout),
		join:      request{head: []byte("POST " + path + "/join" + headers + "Content-Length: 0\r\n\r\n")},
		status:    request{head: []byte("GET " + path + "/status?ticket="), tail: []byte(headers + "\r\n")},
		joinURL:   room + "/join",
		statusURL: room + "/status?ticket=",
		wsURL:     ws + "/ws?ticket=",
	}
}

// hostPort returns the address to dial for base.
func hostPort(base *url.URL) string {
	if base.Port() != "" {
		return base.Host
	}
	if base.Scheme == "https" {
		return net.JoinHostPort(base.Hostname(), "443")
	}
	return net.JoinHostPort(base.Hostname(), "80")
}

func tlsFor(base *url.URL) *tls.Config {
	if base.Scheme != "https" {
		return nil
	}
	return &tls.Config{ServerName: base.Hostname(), MinVersion: tls.VersionTLS12}
}

// Close closes the target's idle connections.
func (t *Target) Close() { t.wire.closeIdle() }

// NewClient returns the HTTP client the runner uses: keep-alive
// connections up to conns idle at once, the given per-request timeout,
// redirects not followed and never a proxy, so requests go to the checked
// host and nowhere else.
func NewClient(conns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          max(conns, 2),
		MaxIdleConnsPerHost:   max(conns, 2),
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Warm opens n keep-alive connections before a paced run, so that its
// first seconds do not time the client's dials.
func (t *Target) Warm(ctx context.Context, n int) error {
	return t.wire.warm(ctx, n)
}

// Ticket is what a join hands out: the signed ticket the other visitor
// endpoints take.
type Ticket struct {
	Ticket string `json:"ticket"`
	Number int64  `json:"number"`
	// Serving, Ahead and Admitted are the line as the answer saw it (a
	// join's or a status poll's).
	Serving  int64 `json:"serving"`
	Ahead    int64 `json:"ahead"`
	Admitted bool  `json:"admitted"`
}

// Join draws a number. With decode false the answer is read and discarded
// unparsed, which is all the join profile needs.
func (t *Target) Join(ctx context.Context, decode bool) (Ticket, Class) {
	a, err := t.wire.do(ctx, t.join, decode)
	if err != nil {
		return Ticket{}, classifyErr(ctx, err)
	}
	if c := classifyStatus(a.status); c != OK {
		return Ticket{}, c
	}
	if !decode {
		return Ticket{}, OK
	}
	var tk Ticket
	if err := json.Unmarshal(a.body, &tk); err != nil || tk.Ticket == "" {
		return Ticket{}, ClassInvalid
	}
	return tk, OK
}

// Status polls the status of a ticket.
func (t *Target) Status(ctx context.Context, ticket string) Class {
	_, c := t.poll(ctx, ticket, false)
	return c
}

// StatusOf polls the status of a ticket and decodes the answer (its Ticket
// field stays empty: the answer does not repeat it).
func (t *Target) StatusOf(ctx context.Context, ticket string) (Ticket, Class) {
	a, c := t.poll(ctx, ticket, true)
	if c != OK {
		return Ticket{}, c
	}
	var tk Ticket
	if err := json.Unmarshal(a.body, &tk); err != nil || tk.Number <= 0 {
		return Ticket{}, ClassInvalid
	}
	return tk, OK
}

func (t *Target) poll(ctx context.Context, ticket string, decode bool) (answer, Class) {
	rq := t.status
	rq.mid = url.QueryEscape(ticket)
	a, err := t.wire.do(ctx, rq, decode)
	if err != nil {
		return answer{}, classifyErr(ctx, err)
	}
	return a, classifyStatus(a.status)
}

// URL returns the method and URL of one request of profile p (join or
// status; status polls ticket), for another client to send.
func (t *Target) URL(p Profile, ticket string) (method, u string) {
	if p == ProfileJoin {
		return http.MethodPost, t.joinURL
	}
	return http.MethodGet, t.statusURL + url.QueryEscape(ticket)
}

// abortOn interrupts the target's open requests when ctx ends, until the
// returned stop is called.
func (t *Target) abortOn(ctx context.Context) (stop func() bool) { return t.wire.abortOn(ctx) }

// JoinBody draws one number and returns the answer's body, for a baseline
// that must answer joins with the same bytes.
func (t *Target) JoinBody(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.joinURL, nil)
	if err != nil {
		return nil, err
	}
	body, _, err := t.okBody(req, "join")
	return body, err
}

// okBody sends req and returns the body and header of its 200 answer.
func (t *Target) okBody(req *http.Request, what string) ([]byte, http.Header, error) {
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s: HTTP %d: %.200s", what, resp.StatusCode, body)
	}
	return body, resp.Header, nil
}

// StatusBody fetches one status answer and returns its body and Retry-After
// header, for a baseline that must answer with the same bytes.
func (t *Target) StatusBody(ctx context.Context, ticket string) (body []byte, retryAfter string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.statusURL+url.QueryEscape(ticket), nil)
	if err != nil {
		return nil, "", err
	}
	body, header, err := t.okBody(req, "status")
	if err != nil {
		return nil, "", err
	}
	return body, header.Get("Retry-After"), nil
}

// JoinMany draws n tickets with a few joins at a time. These preparation
// joins are not part of any measurement. It fails on the first join that
// does not give a ticket.
func (t *Target) JoinMany(ctx context.Context, n int) ([]string, error) {
	const parallel = 16
	tickets := make([]string, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, parallel)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			tk, c := t.Join(ctx, true)
			if c != OK {
				errs <- fmt.Errorf("join %s failed: %s", t.joinURL, c)
				return
			}
			tickets[i] = tk.Ticket
			errs <- nil
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	return tickets, nil
}

func classifyStatus(code int) Class {
	switch {
	case code >= 200 && code < 300:
		return OK
	case code >= 300 && code < 400:
		return Class3xx
	case code >= 400 && code < 500:
		return Class4xx
	default:
		return Class5xx
	}
}

func classifyErr(ctx context.Context, err error) Class {
	if errors.Is(ctx.Err(), context.Canceled) {
		// Whatever the error, the run's end caused it.
		return ClassCanceled
	}
	if errors.Is(err, errMalformed) {
		return ClassInvalid
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return ClassTimeout
	}
	return ClassNetwork
}
