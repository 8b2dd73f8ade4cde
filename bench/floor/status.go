// Package floor is the baseline the server is measured against: bare
// net/http and gorilla/websocket servers that do the least work an answer of
// the same size can cost, and the driver that runs the same load client
// against the floor and the real server and reports the ratio.
package floor

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultStatusBody has the shape and about the size of a status answer of
// the contract. Compare serves the real server's own answer instead.
var DefaultStatusBody = []byte(`{"queue":"bench-0a1b2c3d","name":"Load test","number":1234,"serving":1180,"ahead":54,"admitted":false,"estimatedWaitSeconds":54,"retryAfterSeconds":5,"active":true}`)

// StatusServer answers GET /queue/<slug>/status with one constant JSON body
// and a Retry-After header, on 127.0.0.1 and a free port.
type StatusServer struct {
	srv *http.Server
	url *url.URL
}

// NewStatusServer starts a status floor answering body (DefaultStatusBody
// when nil) with the Retry-After value retryAfter ("5" when empty).
func NewStatusServer(body []byte, retryAfter string) (*StatusServer, error) {
	if body == nil {
		body = DefaultStatusBody
	}
	if retryAfter == "" {
		retryAfter = "5"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// Header values are built once; the handler only copies slices.
	contentType := []string{"application/json"}
	retry := []string{retryAfter}
	length := []string{strconv.Itoa(len(body))}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/queue/") || !strings.HasSuffix(r.URL.Path, "/status") {
			http.NotFound(w, r)
			return
		}
		hdr := w.Header()
		hdr["Content-Type"] = contentType
		hdr["Retry-After"] = retry
		hdr["Content-Length"] = length
		_, _ = w.Write(body)
	})
	s := &StatusServer{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		url: &url.URL{Scheme: "http", Host: ln.Addr().String()},
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL returns the server's base URL.
func (s *StatusServer) URL() *url.URL { return s.url }

// Close stops the server and its connections.
func (s *StatusServer) Close() error {
	if err := s.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
