// Package health fetches a shop's health URL for the self-regulating rate,
// and guards that fetch: the URL is set by operators and by a room's API
// key, so our servers must not become a way into the operator's network.
//
// Fetcher is the seam the room grain calls; HTTP is the real
// implementation. Guard holds the address rules both share.
package health

import (
	"context"
	"errors"
	"time"
)

// MaxBody is the most of a health answer that is read (64 KiB); a longer
// answer is cut there, and a JSON body cut short has no metrics.
const MaxBody = 64 << 10

// ErrRefused is wrapped by every error that means the URL or the address it
// resolves to is not allowed (loopback, private, link-local …).
var ErrRefused = errors.New("health URL refused")

// Answer is one health check's answer.
type Answer struct {
	// Status is the HTTP status; a redirect is not followed and comes back
	// as its own 3xx status.
	Status int
	// Elapsed is the time from the start of the request to the end of the
	// body.
	Elapsed time.Duration
	// Body is the answer's first MaxBody bytes.
	Body []byte
}

// Fetcher makes one health check.
//
// Fetch sends one GET to url and reads at most MaxBody bytes of the answer.
// It returns within ctx's deadline; the caller sets it below the polling
// interval. An error means no answer was read: the deadline passed, the
// connection failed, or the URL was refused (the error then wraps
// ErrRefused). Implementations are safe for concurrent use.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (Answer, error)
}
