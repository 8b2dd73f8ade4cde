// Package token mints and verifies admission tokens: HS256 JWTs signed with
// the room's secret, which shops, proxies and CDNs verify offline.
//
// Claims: iss "aditus-queue", aud the room's slug, qnr the admitted number
// (0 for a bypass), iat, exp, and byp true on bypass admissions.
package token

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is the iss claim of every admission token.
const Issuer = "aditus-queue"

// Claims are an admission token's claims. aud is a plain string, as the
// seed's edge snippets compare it (c.aud === SLUG), not a one-element array.
type Claims struct {
	Issuer    string           `json:"iss"`
	Audience  string           `json:"aud"`
	Number    uint64           `json:"qnr"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ExpiresAt *jwt.NumericDate `json:"exp"`
	Bypass    bool             `json:"byp,omitempty"`
}

// The jwt.Claims methods, so the library validates exp, iss and aud.
func (c Claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c Claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c Claims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c Claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c Claims) GetSubject() (string, error)                  { return "", nil }
func (c Claims) GetAudience() (jwt.ClaimStrings, error)       { return jwt.ClaimStrings{c.Audience}, nil }

// ErrInvalid is returned for every token that does not verify; the reason is
// wrapped for logs, never shown to visitors.
var ErrInvalid = errors.New("invalid admission token")

// MinSecretLen is the shortest secret Mint and Verify accept, in bytes.
// Rooms' secrets are 43 characters; an empty or short secret is a key that
// was never set or could not be opened, and signs nothing.
const MinSecretLen = 16

// ErrShortSecret is returned by Mint and Verify for a secret shorter than
// MinSecretLen: a token signed with an empty key proves nothing.
var ErrShortSecret = errors.New("admission token secret missing or shorter than 16 bytes")

// Mint signs a token for number n of room slug, valid ttl from now.
func Mint(secret []byte, slug string, n uint64, bypass bool, now time.Time, ttl time.Duration) (string, time.Time, error) {
	if len(secret) < MinSecretLen {
		return "", time.Time{}, ErrShortSecret
	}
	exp := now.Add(ttl).Truncate(time.Second)
	c := Claims{
		Issuer:    Issuer,
		Audience:  slug,
		Number:    n,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
		Bypass:    bypass,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	s, err := t.SignedString(secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign admission token: %w", err)
	}
	return s, exp, nil
}

// Verify checks signature (HS256 only: the algorithm is pinned), issuer,
// audience and expiry at now. A secret shorter than MinSecretLen refuses
// every token (ErrInvalid wrapping ErrShortSecret).
func Verify(secret []byte, slug, raw string, now time.Time) (*Claims, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, ErrShortSecret)
	}
	var c Claims
	_, err := jwt.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithAudience(slug),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &c, nil
}
