package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// codeBudget is what one client address may try of bypass codes on one
// front node: ten at once, then one every six seconds. Codes are 20
// random characters, so the budget is not what keeps them unguessable; it
// keeps a guesser from turning every try into a grain call and a log
// lookup.
var codeBudget = ratelimit.Config{Rate: 10.0 / 60, Burst: 10, Capacity: 100_000}

// errTooManyAttempts answers a client over its code budget, whatever code
// it sent: the answer says nothing about the code.
var errTooManyAttempts = errorf(http.StatusTooManyRequests, "rate_limited",
	"Too many bypass code attempts from this address; try again after the time in Retry-After.")

// codeAttempts limits bypass-code attempts (POST /bypass, /enter?code=)
// per client address. Every attempt costs one, valid code or not, before
// the code is looked at, so the budget is no oracle either.
type codeAttempts struct {
	addrs *clientaddr.Resolver
	lim   *ratelimit.Limiter
}

func newCodeAttempts(addrs *clientaddr.Resolver, now func() time.Time) (*codeAttempts, error) {
	c := codeBudget
	c.Now = now
	c.Groups, c.Scales = clientaddr.Wider, clientaddr.WiderScales
	lim, err := ratelimit.New(c)
	if err != nil {
		return nil, err
	}
	if addrs == nil {
		addrs = clientaddr.NewResolver(nil) // no header believed: the peer is the client
	}
	return &codeAttempts{addrs: addrs, lim: lim}, nil
}

// take charges one attempt to the request's client address; past the
// budget it sets Retry-After and returns errTooManyAttempts.
func (a *codeAttempts) take(c echo.Context) error {
	ok, wait := a.lim.Allow(clientaddr.Key(a.addrs.Client(c.Request())))
	if ok {
		return nil
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Retry-After", ratelimit.RetryAfter(wait))
	return errTooManyAttempts
}
