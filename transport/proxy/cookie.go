package proxy

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"sync"
	"unsafe"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// visitorSize is a visitor id's length in bytes.
const visitorSize = 16

// cookieSize is the plain text of a cookie: the visitor id, when the
// visitor's slot ends (Unix nanoseconds; 0 while waiting) and when the
// visitor first came (0 on cookies sealed before arrival times were kept,
// which still open: oldCookieSize).
const (
	cookieSize    = visitorSize + 16
	oldCookieSize = visitorSize + 8
)

// Visitor is what a cookie says.
type Visitor struct {
	ID      [visitorSize]byte
	Expires int64
	// Arrived is when the visitor's first request came: a provisional
	// place is confirmed in that order when the cookie comes back.
	Arrived int64
}

// cookieBox seals and opens the cookies of one room with AES-256-GCM. The
// associated data binds a cookie to its host and room: moved to another,
// it does not open, and its owner is a new visitor.
type cookieBox struct {
	aead cipher.AEAD
	ad   []byte
	// powKey signs the room's proof-of-work challenges (pow.go).
	powKey []byte
}

var errCookie = errors.New("cookie does not open")

func newCookieBox(key []byte, host, name string) (*cookieBox, error) {
	if len(key) != 32 {
		return nil, errors.New("cookie key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	powKey, err := room.SubKey(key, "pow")
	if err != nil {
		return nil, err
	}
	return &cookieBox{aead: aead, ad: []byte("aditus-queue capacity\x00" + host + "\x00" + name), powKey: powKey}, nil
}

// secretKey derives a room's cookie key from the operator's secret, so
// servers given the same secret accept each other's cookies.
func secretKey(secret string) []byte {
	k := sha256.Sum256([]byte("aditus-queue capacity cookie key\x00" + secret))
	return k[:]
}

// seal returns the cookie value of v.
func (b *cookieBox) seal(v Visitor) string {
	var buf [12 + cookieSize + 16]byte
	nonce := buf[:12]
	_, _ = rand.Read(nonce)
	var plain [cookieSize]byte
	copy(plain[:], v.ID[:])
	binary.BigEndian.PutUint64(plain[visitorSize:], uint64(v.Expires))
	binary.BigEndian.PutUint64(plain[visitorSize+8:], uint64(v.Arrived))
	out := b.aead.Seal(buf[:12], nonce, plain[:], b.ad)
	return base64.RawURLEncoding.EncodeToString(out)
}

// open returns what cookie value s says, or errCookie when it was changed,
// made for another host or room, or is not a cookie at all. It allocates
// nothing (its buffers, which the cipher's interface would move to the
// heap, are pooled): the admitted visitor's check is on every request.
func (b *cookieBox) open(s string) (Visitor, error) {
	var v Visitor
	size := cookieSize
	switch base64.RawURLEncoding.DecodedLen(len(s)) {
	case 12 + cookieSize + 16:
	case 12 + oldCookieSize + 16:
		size = oldCookieSize
	default:
		return v, errCookie
	}
	sc := openScratch.Get().(*cookieScratch)
	defer openScratch.Put(sc)
	raw := sc.raw[:12+size+16]
	n, err := base64.RawURLEncoding.Decode(raw, unsafe.Slice(unsafe.StringData(s), len(s))) // read only
	if err != nil || n != len(raw) {
		return v, errCookie
	}
	plain, err := b.aead.Open(sc.plain[:0], raw[:12], raw[12:], b.ad)
	if err != nil {
		return v, errCookie
	}
	copy(v.ID[:], plain[:visitorSize])
	v.Expires = int64(binary.BigEndian.Uint64(plain[visitorSize:]))
	if size == cookieSize {
		v.Arrived = int64(binary.BigEndian.Uint64(plain[visitorSize+8:]))
	}
	return v, nil
}

// cookieScratch is open's working space.
type cookieScratch struct {
	raw   [12 + cookieSize + 16]byte
	plain [cookieSize]byte
}

var openScratch = sync.Pool{New: func() any { return new(cookieScratch) }}

// newVisitor returns a fresh random visitor id.
func newVisitor() Visitor {
	var v Visitor
	_, _ = rand.Read(v.ID[:])
	return v
}

// idString is the visitor id as the grain knows it.
func (v Visitor) idString() string { return base64.RawURLEncoding.EncodeToString(v.ID[:]) }
