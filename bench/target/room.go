package target

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Room names and addresses of the test room a load test runs against.
const (
	SlugPrefix = "bench-"
	RoomName   = "Load test"
	// RoomTargetURL is where an admitted test visitor would be sent; the
	// runner never follows it.
	RoomTargetURL = "https://shop.example.test/"
)

// adminTimeout bounds every single admin call.
const adminTimeout = 10 * time.Second

// Admin talks to the admin API of one server under test with the
// operator's bearer token. Create it with a URL that passed Check.
type Admin struct {
	base   *url.URL
	token  string
	client *http.Client
}

// NewAdmin returns an admin client for base (as returned by Check). A nil
// client means http.DefaultClient's transport with a per-call timeout.
func NewAdmin(base *url.URL, token string, client *http.Client) *Admin {
	if client == nil {
		client = &http.Client{}
	}
	return &Admin{base: base, token: token, client: client}
}

// Room is a test room the runner created itself. Only a Room may be
// changed or deleted by the runner: it never touches a room it did not make.
type Room struct {
	admin *Admin
	// ID is the site id the admin API addresses it by.
	ID string
	// Slug is the visitor-facing name, always SlugPrefix and random hex.
	Slug string
}

// APIError is an answer of the admin API other than the expected success.
type APIError struct {
	Op      string
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// CreateRoom creates a fresh test room with a random slug and the given
// admission rate. A slug that is already taken (409) is never reused: a new
// one is drawn, up to a few times.
func (a *Admin) CreateRoom(ctx context.Context, ratePerMinute int) (*Room, error) {
	if ratePerMinute < 1 {
		return nil, fmt.Errorf("create test room: ratePerMinute must be at least 1, got %d", ratePerMinute)
	}
	var lastErr error
	for range 5 {
		slug, err := newSlug()
		if err != nil {
			return nil, fmt.Errorf("create test room: %w", err)
		}
		body := map[string]any{
			"slug":          slug,
			"name":          RoomName,
			"targetUrl":     RoomTargetURL,
			"ratePerMinute": ratePerMinute,
			// Every bench request comes from this machine's address: the
			// widest address budget, so that the bench measures the join
			// path and not the budget.
			"addressBudget": map[string]any{"perMinute": 6000000, "burst": 10000000},
		}
		var created struct {
			Site map[string]any `json:"site"`
		}
		err = a.do(ctx, "create test room", http.MethodPost, "/sites", body, &created, http.StatusCreated, http.StatusOK)
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict {
			lastErr = err
			continue
		}
		if err != nil {
			return nil, err
		}
		id := siteID(created.Site)
		if id == "" {
			return nil, fmt.Errorf("create test room: answer carries no site id")
		}
		return &Room{admin: a, ID: id, Slug: slug}, nil
	}
	return nil, lastErr
}

// newSlug draws SlugPrefix plus 8 random hex digits.
func newSlug() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return SlugPrefix + hex.EncodeToString(b[:]), nil
}

// siteID reads the id of a site object, whether a string or a number.
func siteID(site map[string]any) string {
	switch id := site["id"].(type) {
	case string:
		return id
	case json.Number:
		return id.String()
	default:
		return ""
	}
}

// Site reads the room's whole configuration, as the admin API gives it.
func (r *Room) Site(ctx context.Context) (map[string]any, error) {
	var raw map[string]any
	if err := r.admin.do(ctx, "read test room", http.MethodGet, r.path(), nil, &raw, http.StatusOK); err != nil {
		return nil, err
	}
	// The site may come bare or wrapped as {"site": {...}}.
	if inner, ok := raw["site"].(map[string]any); ok {
		raw = inner
	}
	if got := raw["slug"]; got != nil && got != r.Slug {
		return nil, fmt.Errorf("read test room: site %s has slug %v, want %s", r.ID, got, r.Slug)
	}
	return raw, nil
}

// SetRate changes the room's admission rate the way an operator's script
// does: read the whole site, change ratePerMinute, write it back without the
// slug. It returns the instant the PATCH was sent, from which push latency is
// measured.
func (r *Room) SetRate(ctx context.Context, ratePerMinute int) (time.Time, error) {
	site, err := r.Site(ctx)
	if err != nil {
		return time.Time{}, err
	}
	site["ratePerMinute"] = ratePerMinute
	delete(site, "slug")
	sentAt := time.Now()
	if err := r.admin.do(ctx, "change test room rate", http.MethodPatch, r.path(), site, nil, http.StatusOK, http.StatusNoContent); err != nil {
		return time.Time{}, err
	}
	return sentAt, nil
}

// Delete removes the room. It is safe to call on a context that was already
// cancelled: the removal runs on its own short deadline.
func (r *Room) Delete(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), adminTimeout)
	defer cancel()
	return r.admin.do(ctx, "delete test room "+r.Slug, http.MethodDelete, r.path(), nil, nil, http.StatusOK, http.StatusNoContent)
}

func (r *Room) path() string { return "/sites/" + url.PathEscape(r.ID) }

// do sends one admin call and decodes a JSON answer into out when out is not
// nil. Any status not in ok is an *APIError carrying the contract's error
// code and message.
func (a *Admin) do(ctx context.Context, op, method, path string, in, out any, ok ...int) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	u := a.base.JoinPath("/api/admin/queue", path)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", op, err)
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			if out == nil || len(bytes.TrimSpace(data)) == 0 {
				return nil
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(out); err != nil {
				return fmt.Errorf("%s: decode answer: %w", op, err)
			}
			return nil
		}
	}
	e := &APIError{Op: op, Status: resp.StatusCode}
	var body2 struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &body2) == nil {
		e.Code, e.Message = body2.Error, body2.Message
	} else {
		e.Message = strings.TrimSpace(string(data[:min(len(data), 200)]))
	}
	return e
}
