package token_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aditus-queue/aditus-queue/actors/token"
)

// FuzzVerify feeds Verify arbitrary token text (as /verify, shops and
// proxies receive it). Invariants: it never panics; a token it accepts
// names this room, this issuer and an unexpired time, was signed with this
// secret (another secret refuses it) and with HS256 (the header says so).
func FuzzVerify(f *testing.F) {
	secret := []byte("room-secret of sixteen bytes or more")
	now := time.Unix(1_900_000_000, 0)
	good, _, _ := token.Mint(secret, "spring-sale", 42, false, now, 10*time.Minute)
	byp, _, _ := token.Mint(secret, "spring-sale", 0, true, now, time.Minute)
	other, _, _ := token.Mint(secret, "other", 42, false, now, 10*time.Minute)
	old, _, _ := token.Mint(secret, "spring-sale", 1, false, now.Add(-time.Hour), time.Minute)
	parts := strings.Split(good, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	hs512 := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS512","typ":"JWT"}`)) + "." + parts[1] + "." + parts[2]
	for _, s := range []string{good, byp, other, old, none, hs512, "", ".", "..", "a.b.c", good + "x", parts[0] + "." + parts[1],
		strings.Replace(good, ".", "..", 1), "eyJ.eyJ.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := token.Verify(secret, "spring-sale", raw, now)
		if err != nil {
			if c != nil {
				t.Fatalf("refused %q but returned claims", raw)
			}
			return
		}
		if c.Audience != "spring-sale" || c.Issuer != token.Issuer || c.ExpiresAt == nil || !c.ExpiresAt.After(now) {
			t.Fatalf("accepted %q with claims %+v", raw, c)
		}
		if _, err := token.Verify([]byte("another-secret"), "spring-sale", raw, now); err == nil {
			t.Fatalf("%q verifies under another secret", raw)
		}
		hdr, _, _ := strings.Cut(raw, ".")
		h, err := base64.RawURLEncoding.DecodeString(hdr)
		if err != nil || !strings.Contains(string(h), `"HS256"`) {
			t.Fatalf("accepted %q whose header is %q", raw, h)
		}
	})
}

// FuzzMintVerify: every slug and number round-trips, and a token of one
// room is refused by every other. Slugs are UTF-8 (they are [a-z0-9-]);
// JSON cannot carry other bytes, so a token minted for them never verifies
// (testdata/fuzz/FuzzMintVerify holds the case).
func FuzzMintVerify(f *testing.F) {
	f.Add("spring-sale", uint64(1), false)
	f.Add("", uint64(0), true)
	f.Add("\"quoted\"\x00", ^uint64(0), false)
	f.Fuzz(func(t *testing.T, slug string, n uint64, bypass bool) {
		if !utf8.ValidString(slug) {
			return
		}
		now := time.Unix(1_900_000_000, 0)
		key := []byte("a room secret of 43 characters, as rooms have")
		raw, exp, err := token.Mint(key, slug, n, bypass, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		c, err := token.Verify(key, slug, raw, now)
		if err != nil {
			if slug == "" {
				return // an empty audience is never accepted
			}
			t.Fatalf("mint(%q, %d) does not verify: %v", slug, n, err)
		}
		if c.Number != n || c.Bypass != bypass || !c.ExpiresAt.Equal(exp) {
			t.Fatalf("mint(%q, %d, %v) verifies as %+v", slug, n, bypass, c)
		}
		if _, err := token.Verify(key, slug+"x", raw, now); err == nil {
			t.Fatalf("token of %q accepted for %q", slug, slug+"x")
		}
	})
}
