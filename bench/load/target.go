package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Target is one room of a server under test, as visitors reach it.
type Target struct {
	client    *http.Client
	joinURL   string
	statusURL string // without the ticket value
	wsURL     string // without the ticket value
}

// NewTarget addresses room slug on base (scheme://host[:port], already
// checked against the loopback guard) through client.
func NewTarget(client *http.Client, base *url.URL, slug string) *Target {
	room := strings.TrimSuffix(base.String(), "/") + "/queue/" + url.PathEscape(slug)
	ws := "ws" + strings.TrimPrefix(room, "http")
	return &Target{
		client:    client,
		joinURL:   room + "/join",
		statusURL: room + "/status?ticket=",
		wsURL:     ws + "/ws?ticket=",
	}
}

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
// first seconds do not time the client's dials: n status requests without a
// ticket (any answer will do) are held open together, which makes the
// client dial one connection each, and then released into its idle pool.
// The client must keep at least n idle connections (NewClient(n, …)).
func (t *Target) Warm(ctx context.Context, n int) error {
	errs := make(chan error, n)
	var opened, release sync.WaitGroup
	opened.Add(n)
	release.Add(1)
	for range n {
		go func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.statusURL, nil)
			if err != nil {
				opened.Done()
				errs <- err
				return
			}
			resp, err := t.client.Do(req)
			opened.Done()
			if err != nil {
				errs <- err
				return
			}
			release.Wait()
			drain(resp)
			errs <- nil
		}()
	}
	opened.Wait()
	release.Done()
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Ticket is what a join hands out: the signed ticket the other visitor
// endpoints take.
type Ticket struct {
	Ticket string `json:"ticket"`
	Number int64  `json:"number"`
}

// Join draws a number. With decode false the answer is read and discarded
// unparsed, which is all the join profile needs.
func (t *Target) Join(ctx context.Context, decode bool) (Ticket, Class) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.joinURL, nil)
	if err != nil {
		return Ticket{}, ClassNetwork
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return Ticket{}, classifyErr(ctx, err)
	}
	defer drain(resp)
	if c := classifyStatus(resp.StatusCode); c != OK {
		return Ticket{}, c
	}
	if !decode {
		return Ticket{}, OK
	}
	var tk Ticket
	if err := json.NewDecoder(resp.Body).Decode(&tk); err != nil {
		return Ticket{}, readErrClass(ctx, err)
	}
	if tk.Ticket == "" {
		return Ticket{}, ClassInvalid
	}
	return tk, OK
}

// Status polls the status of a ticket.
func (t *Target) Status(ctx context.Context, ticket string) Class {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.statusURL+url.QueryEscape(ticket), nil)
	if err != nil {
		return ClassNetwork
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return classifyErr(ctx, err)
	}
	defer drain(resp)
	if c := classifyStatus(resp.StatusCode); c != OK {
		return c
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return readErrClass(ctx, err)
	}
	return OK
}

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

// drain reads what is left of a body, so the connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
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
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return ClassCanceled
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return ClassTimeout
	}
	return ClassNetwork
}

func readErrClass(ctx context.Context, err error) Class {
	if c := classifyErr(ctx, err); c != ClassNetwork {
		return c
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ClassInvalid
	}
	return ClassNetwork
}
