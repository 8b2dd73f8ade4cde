package beacon

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// ErrNoChain is returned for a round while the chain's description could
// not be read yet: the draw goes without the beacon (its reveal says so).
var ErrNoChain = errors.New("beacon: the chain's description could not be read yet")

// wrongURL is a failure that no retry mends: the relay answered that the
// chain does not exist there, or described a chain that fails its checks.
type wrongURL struct{ err error }

func (e *wrongURL) Error() string { return e.err.Error() }
func (e *wrongURL) Unwrap() error { return e.err }

// Backoff paces the tries to read a chain's description that could not be
// read: Min after the first failure, doubling up to Max.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff is the pace of a node's tries: a relay back within
// seconds is read within seconds, one down for long costs a try a minute.
var DefaultBackoff = Backoff{Min: time.Second, Max: time.Minute}

// retrier reads the description in the background until it has it.
type retrier struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Dial checks rawURL and reads the chain's description once. A relay that
// cannot be reached (or answers 5xx) does not stop the caller: the client
// is returned without a chain (Chain is nil, Wait answers ErrNoChain, so
// draws use the key alone, as the reveal says) and reads it again in the
// background, paced by b, logging each failure as a warning, until it has
// it or Close is called. A URL that is not http(s), a relay that answers
// that the chain is not there (4xx) or a description that fails its checks
// is an error: no retry would mend it.
func Dial(ctx context.Context, rawURL string, b Backoff, log *slog.Logger) (*Client, error) {
	c, err := newClient(rawURL)
	if err != nil {
		return nil, err
	}
	err = c.readInfo(ctx)
	var wrong *wrongURL
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &wrong):
		return nil, err
	}
	log.Warn("beacon relay unreachable; draws use the key alone until its chain is read", "url", rawURL, "error", err)
	rctx, cancel := context.WithCancel(context.Background())
	c.retry = &retrier{cancel: cancel, done: make(chan struct{})}
	go c.readAgain(rctx, b, log)
	return c, nil
}

// readAgain tries to read the description until it has it or ctx ends.
func (c *Client) readAgain(ctx context.Context, b Backoff, log *slog.Logger) {
	defer close(c.retry.done)
	wait := b.Min
	for {
		if sleep(ctx, wait) != nil {
			return
		}
		err := c.readInfo(ctx)
		if err == nil {
			ch := c.Chain()
			log.Info("beacon chain read; draws armed from now on mix in its rounds", "scheme", ch.Scheme, "period", ch.PeriodSeconds)
			return
		}
		if ctx.Err() != nil {
			return
		}
		wait = min(2*wait, b.Max)
		log.Warn("beacon relay still unreachable", "error", err, "next try in", wait)
	}
}

// Close stops reading the description in the background, if it still
// runs, and waits for it.
func (c *Client) Close() {
	if c.retry != nil {
		c.retry.cancel()
		<-c.retry.done
	}
}
