package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMintVerify(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	raw, exp, err := Mint(secret, "spring-sale", 42, false, now, 600*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := exp, now.Add(600*time.Second); !got.Equal(want) {
		t.Fatalf("exp %v, want %v", got, want)
	}
	c, err := Verify(secret, "spring-sale", raw, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.Number != 42 || c.Bypass || c.Issuer != Issuer {
		t.Fatalf("claims %+v", c)
	}
	// The claims are exactly those the seed's edge snippets read.
	parts := strings.Split(raw, ".")
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"iss", "aud", "qnr", "iat", "exp"} {
		if _, ok := m[k]; !ok {
			t.Errorf("claim %s missing in %s", k, body)
		}
	}
	if m["aud"] != "spring-sale" {
		t.Errorf("aud %v, want a plain string like the seed's snippets compare", m["aud"])
	}
	if _, ok := m["byp"]; ok {
		t.Errorf("byp present on a regular admission")
	}
	// The Cloudflare/nginx snippets verify base64url(HMAC-SHA256(secret, header.payload)).
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) != parts[2] {
		t.Errorf("signature is not plain HS256 over header.payload")
	}
}

func TestVerifyRefuses(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	good, _, _ := Mint(secret, "a", 1, false, now, time.Minute)
	bypass, _, _ := Mint(secret, "a", 0, true, now, time.Minute)
	otherSecret, _, _ := Mint([]byte("another secret of 32 bytes......"), "a", 1, false, now, time.Minute)
	parts := strings.Split(good, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	hs512 := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS512","typ":"JWT"}`)) + "." + parts[1] + "." + parts[2]
	for _, tc := range []struct {
		name, slug, raw string
		at              time.Time
	}{
		{"expired", "a", good, now.Add(2 * time.Minute)},
		{"other audience", "b", good, now},
		{"other secret", "a", otherSecret, now},
		{"alg none", "a", none, now},
		{"alg swapped", "a", hs512, now},
		{"garbage", "a", "not.a.jwt", now},
		{"empty", "a", "", now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Verify(secret, tc.slug, tc.raw, tc.at); err == nil {
				t.Fatalf("got valid, want refused")
			}
		})
	}
	c, err := Verify(secret, "a", bypass, now)
	if err != nil || !c.Bypass || c.Number != 0 {
		t.Fatalf("bypass token: %+v %v", c, err)
	}
}

// forge signs claims as HS256 with key by hand, as an attacker who guesses
// that a node holds an empty or short key would.
func forge(key []byte, claims string) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(head + "." + body))
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestShortSecretRefuses(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	claims := `{"iss":"aditus-queue","aud":"a","qnr":1,"iat":1800000000,"exp":1800000600}`
	for _, key := range [][]byte{nil, {}, []byte("fifteen bytes.."), []byte("x")} {
		raw := forge(key, claims)
		if c, err := Verify(key, "a", raw, now); err == nil || !errors.Is(err, ErrShortSecret) || !errors.Is(err, ErrInvalid) {
			t.Errorf("Verify with a %d-byte key of a token signed with it: %+v %v, want ErrInvalid and ErrShortSecret", len(key), c, err)
		}
		if _, _, err := Mint(key, "a", 1, false, now, time.Minute); !errors.Is(err, ErrShortSecret) {
			t.Errorf("Mint with a %d-byte key: %v, want ErrShortSecret", len(key), err)
		}
	}
	// The shortest accepted key still works both ways.
	key := []byte("sixteen bytes ok")
	if _, err := Verify(key, "a", forge(key, claims), now); err != nil {
		t.Fatalf("a %d-byte key: %v", len(key), err)
	}
}
