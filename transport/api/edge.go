package api

import (
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"
)

// maxBody bounds a request body (413 too_large beyond it).
const maxBody = 64 << 10

// edge is the one middleware every request passes: it turns a panic into
// a 500, counts the request in the metrics, and bounds the body. One
// middleware rather than three (Echo's Recover and BodyLimit beside the
// metrics), because Echo composes the middleware chain anew for every
// request: each middleware costs a closure a request, and BodyLimit a
// reader even for requests that have no body.
func (s *Server) edge(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("handler panicked", "path", c.Request().URL.Path, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("handler panicked: %v", r)
			}
			err = s.metrics.observe(c, start, err)
		}()
		if req := c.Request(); req.Body != nil && req.Body != http.NoBody {
			if req.ContentLength > maxBody {
				return echo.ErrStatusRequestEntityTooLarge
			}
			req.Body = &limitedBody{rc: req.Body}
		}
		return next(c)
	}
}

// limitedBody fails a read once more than maxBody bytes were read.
type limitedBody struct {
	rc   io.ReadCloser
	read int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.read += int64(n)
	if b.read > maxBody {
		return n, echo.ErrStatusRequestEntityTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
