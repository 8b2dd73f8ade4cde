package health

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HTTP is the real Fetcher: one GET per check over its own transport,
// whose dialer refuses non-public addresses at connect time, following no
// redirect and reading at most MaxBody bytes.
type HTTP struct {
	guard  *Guard
	client *http.Client
}

// NewHTTP returns a Fetcher that applies g to every URL and connection.
func NewHTTP(g *Guard) *HTTP {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.Control}
	tr := &http.Transport{
		// No proxy from the environment: it would dial the proxy, not the
		// shop, and the address check would judge the wrong host.
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &HTTP{guard: g, client: &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Fetch implements Fetcher.
func (h *HTTP) Fetch(ctx context.Context, url string) (Answer, error) {
	if err := h.guard.CheckURL(ctx, url); err != nil {
		return Answer{}, err
	}
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "aditus-queue-health/1")
	res, err := h.client.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxBody))
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: res.StatusCode, Elapsed: time.Since(start), Body: body}, nil
}

var _ Fetcher = (*HTTP)(nil)
