package proxy

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestCookieBoundToHostAndRoom(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	box, _ := newCookieBox(key, "shop.example.com", "/")
	v := newVisitor()
	v.Expires = 12345
	c := box.seal(v)
	got, err := box.open(c)
	if err != nil || got != v {
		t.Fatalf("open: got %+v %v, want %+v", got, err, v)
	}
	other := map[string]*cookieBox{}
	other["room"], _ = newCookieBox(key, "shop.example.com", "checkout")
	other["host"], _ = newCookieBox(key, "other.example.com", "/")
	other["key"], _ = newCookieBox(bytes.Repeat([]byte{8}, 32), "shop.example.com", "/")
	for name, b := range other {
		if _, err := b.open(c); err == nil {
			t.Errorf("a cookie opened under another %s", name)
		}
	}
	flip := []byte(c)
	flip[20] ^= 1
	for _, bad := range []string{"", "x", string(flip), c + "A", strings.Repeat("A", len(c))} {
		if _, err := box.open(bad); err == nil {
			t.Errorf("cookie %q opened", bad)
		}
	}
}

// BenchmarkCookieOpen is the admitted visitor's check: one cookie opened,
// no store asked.
func BenchmarkCookieOpen(b *testing.B) {
	box, _ := newCookieBox(bytes.Repeat([]byte{7}, 32), "shop.example.com", "/")
	c := box.seal(Visitor{Expires: 1 << 62})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := box.open(c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCookieArrivalAndOldCookies keeps the arrival time in the cookie, and
// still opens a cookie sealed in the earlier layout (no arrival time).
func TestCookieArrivalAndOldCookies(t *testing.T) {
	box, _ := newCookieBox(bytes.Repeat([]byte{7}, 32), "shop.example.com", "/")
	v := newVisitor()
	v.Arrived = 1_780_000_000_000_000_000
	if got, err := box.open(box.seal(v)); err != nil || got != v {
		t.Fatalf("open: got %+v %v, want %+v", got, err, v)
	}
	var nonce [12]byte
	plain := make([]byte, oldCookieSize)
	copy(plain, v.ID[:])
	plain[oldCookieSize-1] = 9
	old := base64.RawURLEncoding.EncodeToString(box.aead.Seal(nonce[:], nonce[:], plain, box.ad))
	got, err := box.open(old)
	if want := (Visitor{ID: v.ID, Expires: 9}); err != nil || got != want {
		t.Fatalf("old cookie: got %+v %v, want %+v", got, err, want)
	}
}
