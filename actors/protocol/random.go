package protocol

import (
	"crypto/rand"
	"encoding/base32"
)

// RandomBytes returns n random bytes.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return b
}

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// RandomID returns a lower-case base32 id of n random bytes.
func RandomID(n int) string { return lowerBase32.EncodeToString(RandomBytes(n)) }

// NewRoomID returns a fresh room id.
func NewRoomID() string { return "r" + RandomID(10) }
