package proxy

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// FuzzCookieOpen opens fuzzed cookie values, and seals fuzzed visitors.
// Invariants: a value opens only when it was sealed by this box (a value
// changed anywhere, or in either layout's length but not sealed, does not
// open), and what is sealed opens to the same visitor.
func FuzzCookieOpen(f *testing.F) {
	box, _ := newCookieBox(bytes.Repeat([]byte{7}, 32), "shop.example.com", "/")
	// good is sealed with a fixed nonce, so that every fuzzing process
	// knows the same one.
	var nonce [12]byte
	plain := make([]byte, cookieSize)
	plain[cookieSize-1] = 9
	goodRaw := box.aead.Seal(nonce[:], nonce[:], plain, box.ad)
	good := base64.RawURLEncoding.EncodeToString(goodRaw)
	f.Add(good, []byte("0123456789abcdef"), int64(5), int64(9))
	f.Add(good[:len(good)-1]+"A", []byte{}, int64(0), int64(-1))
	f.Add(good[:43], []byte{1}, int64(1)<<62, int64(1))
	f.Add("", []byte{2}, int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, s string, id []byte, expires, arrived int64) {
		if v, err := box.open(s); err == nil {
			// Only a value sealed here opens: the fuzzer cannot forge one
			// (base64 may spell good's bytes with other unused bits).
			if raw, _ := base64.RawURLEncoding.DecodeString(s); !bytes.Equal(raw, goodRaw) {
				t.Fatalf("%q opened to %+v", s, v)
			}
		}
		var v Visitor
		copy(v.ID[:], id)
		v.Expires, v.Arrived = expires, arrived
		got, err := box.open(box.seal(v))
		if err != nil || got != v {
			t.Fatalf("sealed %+v opened to %+v, %v", v, got, err)
		}
	})
}
