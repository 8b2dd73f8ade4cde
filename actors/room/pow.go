package room

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"time"
)

// Proof of work before a number is issued. A challenge is stateless: it
// carries its own expiry, difficulty and 16 random bytes, signed for one
// room with SubKey(ticketKey, "pow"), so any front node verifies it without
// asking anybody. A solution is a nonce such that
// SHA-256(challenge + "." + nonce) starts with Bits zero bits.
//
// Encoding: base64url(version ‖ expiry as Unix seconds (8 bytes) ‖ bits ‖
// id (16 bytes) ‖ first 16 bytes of HMAC-SHA256(key, "pow" ‖ room id ‖
// the bytes before)).

// ChallengeTTL is how long a challenge may be solved.
const ChallengeTTL = 300 * time.Second

// MaxNonceLen bounds the nonce a visitor sends (the page sends decimal
// digits), so checking a solution costs one short hash.
const MaxNonceLen = 64

const (
	challengeVersion = 1
	challengePayload = 1 + 8 + 1 + 16
	challengeMACLen  = 16
	challengeLen     = challengePayload + challengeMACLen
)

// Challenge is a decoded proof-of-work challenge.
type Challenge struct {
	// ID is the challenge's random part: it names the challenge when it is
	// spent.
	ID      [16]byte
	Bits    int
	Expires time.Time
}

// SignChallenge encodes c for room roomID under key (SubKey(ticketKey,
// "pow")). The expiry is kept to the second. It fails only for a short key
// (CheckKey).
func SignChallenge(key []byte, roomID string, c Challenge) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	var buf [challengeLen]byte
	buf[0] = challengeVersion
	binary.BigEndian.PutUint64(buf[1:9], uint64(c.Expires.Unix()))
	buf[9] = byte(c.Bits)
	copy(buf[10:26], c.ID[:])
	copy(buf[challengePayload:], challengeMAC(key, roomID, buf[:challengePayload]))
	return base64.RawURLEncoding.EncodeToString(buf[:]), nil
}

// ErrBadChallenge is returned for a challenge this room did not sign.
var ErrBadChallenge = errors.New("challenge not signed for this room")

// ParseChallenge decodes a challenge and checks, in constant time, that it
// was signed for room roomID (else ErrBadChallenge). It does not check the
// expiry. A short key (CheckKey) refuses every challenge with ErrShortKey.
func ParseChallenge(key []byte, roomID, s string) (Challenge, error) {
	var c Challenge
	if err := CheckKey(key); err != nil {
		return c, err
	}
	if len(s) != base64.RawURLEncoding.EncodedLen(challengeLen) {
		return c, ErrBadChallenge
	}
	var buf [challengeLen]byte
	if n, err := base64.RawURLEncoding.Decode(buf[:], []byte(s)); err != nil || n != challengeLen {
		return c, ErrBadChallenge
	}
	if buf[0] != challengeVersion || !hmac.Equal(buf[challengePayload:], challengeMAC(key, roomID, buf[:challengePayload])) {
		return c, ErrBadChallenge
	}
	exp := binary.BigEndian.Uint64(buf[1:9])
	if exp > 1<<40 {
		return c, ErrBadChallenge
	}
	c.Expires = time.Unix(int64(exp), 0)
	c.Bits = int(buf[9])
	copy(c.ID[:], buf[10:26])
	return c, nil
}

func challengeMAC(key []byte, roomID string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("pow\x00"))
	m.Write([]byte(roomID))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:challengeMACLen]
}

// PowSolved reports whether nonce solves challenge at difficulty bits.
func PowSolved(challenge, nonce string, bits int) bool {
	if nonce == "" || len(nonce) > MaxNonceLen {
		return false
	}
	h := sha256.New()
	h.Write([]byte(challenge))
	h.Write([]byte{'.'})
	h.Write([]byte(nonce))
	var sum [sha256.Size]byte
	return leadingZeros(h.Sum(sum[:0])) >= bits
}

func leadingZeros(b []byte) int {
	n := 0
	for i := 0; i+8 <= len(b); i += 8 {
		w := binary.BigEndian.Uint64(b[i:])
		if w != 0 {
			return n + bits.LeadingZeros64(w)
		}
		n += 64
	}
	return n
}

// SolvePow finds the smallest decimal nonce that solves challenge at
// difficulty bits, as the hosted page does; about 2^bits hashes on average.
// For load tests and custom integrations written in Go.
func SolvePow(challenge string, bits int) string {
	prefix := make([]byte, 0, len(challenge)+1+20)
	prefix = append(prefix, challenge...)
	prefix = append(prefix, '.')
	buf := prefix
	for n := uint64(0); ; n++ {
		buf = strconv.AppendUint(buf[:len(prefix)], n, 10)
		if sum := sha256.Sum256(buf); leadingZeros(sum[:]) >= bits {
			return string(buf[len(prefix):])
		}
	}
}

// NewChallenge signs a fresh challenge of bits for room roomID under key,
// living at least ChallengeTTL from now (the expiry is kept to the second,
// so it is rounded up). It fails only for a short key (CheckKey).
func NewChallenge(key []byte, roomID string, bits int, now time.Time) (string, error) {
	var c Challenge
	_, _ = rand.Read(c.ID[:])
	c.Expires = now.Add(ChallengeTTL + time.Second - 1).Truncate(time.Second)
	c.Bits = bits
	return SignChallenge(key, roomID, c)
}

// Why a solution is refused (CheckSolution).
var (
	ErrChallengeExpired = errors.New("challenge expired")
	ErrChallengeEasy    = errors.New("challenge easier than the work asked now")
	ErrNotSolved        = errors.New("nonce does not solve the challenge")
)

// CheckSolution checks a solution of a challenge of room roomID at now:
// signed under key (ErrBadChallenge), unexpired, at least bits hard, and
// solved. It returns the challenge, for the caller to spend; it does not
// know what was spent.
func CheckSolution(key []byte, roomID, challenge, nonce string, bits int, now time.Time) (Challenge, error) {
	c, err := ParseChallenge(key, roomID, challenge)
	switch {
	case err != nil:
		return c, err
	case !now.Before(c.Expires):
		return c, ErrChallengeExpired
	case c.Bits < bits:
		return c, ErrChallengeEasy
	case !PowSolved(challenge, nonce, c.Bits):
		return c, ErrNotSolved
	}
	return c, nil
}
