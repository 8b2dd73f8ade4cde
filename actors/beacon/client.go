package beacon

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

const (
	// maxBody bounds what one answer of the beacon may send.
	maxBody = 64 << 10
	// requestTimeout bounds one request to the beacon.
	requestTimeout = 5 * time.Second
	// retryEvery paces the tries for a round not yet published.
	retryEvery = time.Second
)

// Client reads one drand chain over drand's HTTP API: GET <url>/info and
// GET <url>/public/<round>. The URL is the operator's (--beacon-url), e.g.
// https://api.drand.sh/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971;
// redirects are not followed and answers are bounded.
type Client struct {
	base string
	http *http.Client
	// chain is the checked description; nil until it is read (Dial).
	chain atomic.Pointer[room.Chain]
	// retry is the background reading of the description, when the first
	// try failed (Dial); nil otherwise.
	retry *retrier
}

// Info is drand's chain description, in either of its JSON spellings.
type Info struct {
	PublicKey   string `json:"public_key"`
	Period      int64  `json:"period"`
	GenesisTime int64  `json:"genesis_time"`
	Hash        string `json:"hash"`
	ChainHash   string `json:"chain_hash"`
	GroupHash   string `json:"groupHash"`
	GenesisSeed string `json:"genesis_seed"`
	SchemeID    string `json:"schemeID"`
	Scheme      string `json:"scheme"`
	BeaconID    string `json:"beacon_id"`
	Metadata    struct {
		BeaconID string `json:"beaconID"`
	} `json:"metadata"`
}

// Round is one published round as drand's HTTP API spells it.
type Round struct {
	Round             uint64 `json:"round"`
	Randomness        string `json:"randomness"`
	Signature         string `json:"signature"`
	PreviousSignature string `json:"previous_signature,omitempty"`
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Chain converts the description and checks it: the hash must be the hash
// of the rest and the scheme one this package verifies.
func (i *Info) Chain() (*room.Chain, error) {
	var c room.Chain
	var err error
	if c.PublicKey, err = hex.DecodeString(i.PublicKey); err != nil {
		return nil, fmt.Errorf("beacon: public key: %w", err)
	}
	if c.Hash, err = hex.DecodeString(pick(i.Hash, i.ChainHash)); err != nil {
		return nil, fmt.Errorf("beacon: chain hash: %w", err)
	}
	if c.GenesisSeed, err = hex.DecodeString(pick(i.GroupHash, i.GenesisSeed)); err != nil {
		return nil, fmt.Errorf("beacon: genesis seed: %w", err)
	}
	c.Scheme = pick(pick(i.SchemeID, i.Scheme), SchemeChained)
	c.BeaconID = pick(i.BeaconID, i.Metadata.BeaconID)
	c.GenesisTime, c.PeriodSeconds = i.GenesisTime, i.Period
	if c.PeriodSeconds <= 0 || c.GenesisTime <= 0 {
		return nil, errors.New("beacon: the chain has no period or genesis time")
	}
	switch c.Scheme {
	case SchemeChained, SchemeUnchained, SchemeG1:
	default:
		return nil, fmt.Errorf("%w %q", ErrScheme, c.Scheme)
	}
	if err := CheckChain(&c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Decode converts the round from hex.
func (r *Round) Decode() (room.BeaconRound, error) {
	out := room.BeaconRound{Round: r.Round}
	var err error
	if out.Randomness, err = hex.DecodeString(r.Randomness); err != nil {
		return out, fmt.Errorf("beacon: randomness: %w", err)
	}
	if out.Signature, err = hex.DecodeString(r.Signature); err != nil {
		return out, fmt.Errorf("beacon: signature: %w", err)
	}
	if out.PreviousSignature, err = hex.DecodeString(r.PreviousSignature); err != nil {
		return out, fmt.Errorf("beacon: previous signature: %w", err)
	}
	if len(out.PreviousSignature) == 0 {
		out.PreviousSignature = nil
	}
	return out, nil
}

// Open reads and checks the chain's description at rawURL.
func Open(ctx context.Context, rawURL string) (*Client, error) {
	c, err := newClient(rawURL)
	if err != nil {
		return nil, err
	}
	if err := c.readInfo(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func newClient(rawURL string) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("beacon: %q is not an http(s) URL", rawURL)
	}
	return &Client{base: strings.TrimRight(rawURL, "/"), http: &http.Client{
		Timeout:       requestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// readInfo reads and checks the chain's description.
func (c *Client) readInfo(ctx context.Context) error {
	var info Info
	if err := c.get(ctx, "/info", &info); err != nil {
		return err
	}
	ch, err := info.Chain()
	if err != nil {
		return &wrongURL{err}
	}
	c.chain.Store(ch)
	return nil
}

// Chain is the chain's checked description, or nil while it could not be
// read yet (Dial).
func (c *Client) Chain() *room.Chain { return c.chain.Load() }

// Fetch reads round n once and verifies it.
func (c *Client) Fetch(ctx context.Context, n uint64) (room.BeaconRound, error) {
	ch := c.Chain()
	if ch == nil {
		return room.BeaconRound{}, ErrNoChain
	}
	var r Round
	if err := c.get(ctx, "/public/"+strconv.FormatUint(n, 10), &r); err != nil {
		return room.BeaconRound{}, err
	}
	if r.Round != n {
		return room.BeaconRound{}, fmt.Errorf("beacon: asked for round %d, got %d", n, r.Round)
	}
	b, err := r.Decode()
	if err != nil {
		return b, err
	}
	return b, Verify(ch, &b)
}

// Wait waits until round n is due, then tries to read it once a second
// until it verifies or ctx ends; it returns the last failure then.
func (c *Client) Wait(ctx context.Context, n uint64) (room.BeaconRound, error) {
	ch := c.Chain()
	if ch == nil {
		return room.BeaconRound{}, ErrNoChain
	}
	if err := sleep(ctx, time.Until(ch.RoundTime(n))); err != nil {
		return room.BeaconRound{}, fmt.Errorf("beacon: round %d not yet due: %w", n, err)
	}
	for {
		b, err := c.Fetch(ctx, n)
		if err == nil || errors.Is(err, ErrSignature) {
			return b, err
		}
		if serr := sleep(ctx, retryEvery); serr != nil {
			return b, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return fmt.Errorf("beacon: %w", err)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("beacon: GET %s: %w", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		err := fmt.Errorf("beacon: GET %s: status %d", path, res.StatusCode)
		if res.StatusCode >= 400 && res.StatusCode < 500 && path == "/info" {
			// The relay is up and says there is no such chain.
			return &wrongURL{err}
		}
		return err
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxBody)).Decode(v); err != nil {
		return fmt.Errorf("beacon: GET %s: %w", path, err)
	}
	return nil
}
