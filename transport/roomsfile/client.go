package roomsfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// maxAnswerBytes bounds an admin API answer read by the client.
const maxAnswerBytes = 16 << 20

// requestTimeout bounds each admin API call.
const requestTimeout = 30 * time.Second

// Client calls a node's admin API with the operator's token. It never
// puts the token, a room's secret, a key or a code in an error.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient checks base (the node's URL) and token. Plain http is taken
// only for a loopback host unless allowHTTP: the token would cross the
// network readable.
func NewClient(base, token string, allowHTTP bool) (*Client, error) {
	if strings.TrimSpace(token) == "" {
		return nil, errors.New("no admin token: set AQ_ADMIN_TOKEN or name a file with --admin-token-file")
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, errors.New("--url: not a URL; want the node's base URL, http(s)://host[:port]")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		// Redacted: a password written into the URL is not repeated.
		return nil, fmt.Errorf("--url %q: want the node's base URL, http(s)://host[:port], without credentials", u.Redacted())
	}
	if u.Scheme == "http" && !allowHTTP && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("--url %q: plain http to another machine would send the admin token readable; use https (or --allow-http on a private network)", u.String())
	}
	return &Client{base: u.String(), token: strings.TrimSpace(token), http: &http.Client{Timeout: requestTimeout}}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// APIError is an error answer of the admin API.
type APIError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
	Field        string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// IsConflict reports whether err is the node's 409: the room changed
// since it was read, or the slug is taken.
func IsConflict(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusConflict
}

// IsNotFound reports whether err is the node's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// Do sends one admin call: body (when not nil) as JSON, If-Match when
// ifMatch is set, and decodes a 2xx answer into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path, ifMatch string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		ae := &APIError{Method: method, Path: path, Status: res.StatusCode, Code: "unexpected", Message: http.StatusText(res.StatusCode)}
		var e struct{ Error, Message, Field string }
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			ae.Code, ae.Message, ae.Field = e.Error, e.Message, e.Field
		}
		return nil, ae
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, path, err)
		}
	}
	return res.Header, nil
}

const sitesPath = "/api/admin/queue/sites"

// SitePath is the admin path of room id (escaped), with a sub-path
// appended as it is: escape any id in it.
func SitePath(id, sub string) string {
	return sitesPath + "/" + url.PathEscape(id) + sub
}

// siteJSON is a room as the admin API answers it.
type siteJSON struct {
	ID string `json:"id"`
	room.Config
	UpdatedAt string `json:"updatedAt"`
}

func (s siteJSON) site() Site {
	return Site{ID: s.ID, Version: `"` + s.UpdatedAt + `"`, Config: s.Config}
}

// Sites reads every room of the node.
func (c *Client) Sites(ctx context.Context) ([]Site, error) {
	var list struct {
		Sites []siteJSON `json:"sites"`
	}
	if _, err := c.Do(ctx, http.MethodGet, sitesPath, "", nil, &list); err != nil {
		return nil, err
	}
	out := make([]Site, 0, len(list.Sites))
	for _, s := range list.Sites {
		out = append(out, s.site())
	}
	return out, nil
}

// Site reads one room with its version.
func (c *Client) Site(ctx context.Context, id string) (Site, error) {
	var s siteJSON
	h, err := c.Do(ctx, http.MethodGet, SitePath(id, ""), "", nil, &s)
	return versioned(s, h, err)
}

// versioned takes a room's version from its answer's ETag.
func versioned(s siteJSON, h http.Header, err error) (Site, error) {
	if err != nil {
		return Site{}, err
	}
	out := s.site()
	if etag := h.Get("ETag"); etag != "" {
		out.Version = etag
	}
	return out, nil
}

// Create creates a room; the answer holds its token-signing secret, shown
// this once.
func (c *Client) Create(ctx context.Context, cfg room.Config) (Site, string, error) {
	var created struct {
		Site   siteJSON `json:"site"`
		Secret string   `json:"secret"`
	}
	if _, err := c.Do(ctx, http.MethodPost, sitesPath, "", cfg, &created); err != nil {
		return Site{}, "", err
	}
	return created.Site.site(), created.Secret, nil
}

// Update writes a room's whole configuration over version (its ETag as
// read; "" writes unconditionally).
func (c *Client) Update(ctx context.Context, id, version string, cfg room.Config) (Site, error) {
	var s siteJSON
	h, err := c.Do(ctx, http.MethodPatch, SitePath(id, ""), version, cfg, &s)
	return versioned(s, h, err)
}

// Delete removes a room.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.Do(ctx, http.MethodDelete, SitePath(id, ""), "", nil, nil)
	return err
}
