package room_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

var ticketKey = []byte("0123456789abcdef0123456789abcdef")

// Invariant 9: a ticket binds a number to its room; nobody claims a number
// by typing it.
func TestTicketRoundTrip(t *testing.T) {
	for _, n := range []uint64{1, 2, 255, 256, 1 << 32, math.MaxUint64} {
		tk := mustTicket(ticketKey, "r1", n)
		got, err := room.ParseTicket(ticketKey, "r1", tk)
		if err != nil || got != n {
			t.Fatalf("ParseTicket(SignTicket(%d)): got %d %v", n, got, err)
		}
		if strings.ContainsAny(tk, "+/=") {
			t.Fatalf("ticket %q is not URL-safe", tk)
		}
	}
}

func TestTicketRefused(t *testing.T) {
	good := mustTicket(ticketKey, "r1", 42)
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	otherNumber := append([]byte(nil), raw...)
	otherNumber[7] = 41 // number 41 with 42's MAC
	flip := func(i int) string {
		b := []byte(good)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	cases := []struct {
		name, room, ticket string
		key                []byte
	}{
		{"another room", "r2", good, ticketKey},
		{"a room whose id extends this one", "r1x", good, ticketKey},
		{"another key", "r1", good, []byte("another key")},
		{"no key", "r1", good, nil},
		{"another number under the same MAC", "r1", base64.RawURLEncoding.EncodeToString(otherNumber), ticketKey},
		{"bare number", "r1", "42", ticketKey},
		{"number zero", "r1", mustTicket(ticketKey, "r1", 0), ticketKey},
		{"truncated", "r1", good[:len(good)-1], ticketKey},
		{"first character missing", "r1", good[1:], ticketKey},
		{"extended", "r1", good + "A", ticketKey},
		{"padded", "r1", good + "==", ticketKey},
		{"standard alphabet", "r1", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "", ticketKey},
		{"empty", "r1", "", ticketKey},
		{"garbage of the right length", "r1", strings.Repeat("!", len(good)), ticketKey},
		{"spaces", "r1", strings.Repeat(" ", len(good)), ticketKey},
		{"newline inside", "r1", good[:10] + "\n" + good[11:], ticketKey},
		{"MAC zeroed", "r1", base64.RawURLEncoding.EncodeToString(append(raw[:8:8], make([]byte, 16)...)), ticketKey},
	}
	for i := range good {
		cases = append(cases, struct {
			name, room, ticket string
			key                []byte
		}{"character " + string(rune('a'+i%26)) + " tampered", "r1", flip(i), ticketKey})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "standard alphabet" && !strings.ContainsAny(tc.ticket, "+/") {
				t.Skip("ticket has no character that differs between the alphabets")
			}
			if n, err := room.ParseTicket(tc.key, tc.room, tc.ticket); err == nil {
				t.Fatalf("ParseTicket(%q) accepted as %d", tc.ticket, n)
			}
		})
	}
}

func TestSubKeyDiffersByPurpose(t *testing.T) {
	a, b := mustSubKey(ticketKey, "pow"), mustSubKey(ticketKey, "other")
	if string(a) == string(b) || string(a) == string(ticketKey) || len(a) != 32 {
		t.Fatalf("SubKey: got %x and %x", a, b)
	}
	if string(mustSubKey(ticketKey, "pow")) != string(a) {
		t.Fatal("SubKey is not deterministic")
	}
}

// The ticket encoding is part of every ticket handed out: it must not
// change. The value was computed independently (Python's hmac module).
func TestTicketEncodingIsStable(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	if got, want := mustTicket(key, "room-1", 1234567), "AAAAAAAS1ofHHafik2OqhV1cY7Ft3quT"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Keyed MAC states are pooled per key; many keys, and many goroutines at
// once, must each get their own key's answer.
func TestTicketsUnderManyKeysAtOnce(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				key := []byte(fmt.Sprintf("the ticket key %d-%d", g, i%700))
				n := uint64(i + 1)
				tk := mustTicket(key, "r", n)
				if got, err := room.ParseTicket(key, "r", tk); err != nil || got != n {
					t.Errorf("key %s: got %d, %v; want %d", key, got, err, n)
					return
				}
				if _, err := room.ParseTicket([]byte(fmt.Sprintf("the ticket key %d-%d", g, i%700+1)), "r", tk); err == nil {
					t.Errorf("key %s: another key accepted its ticket", key)
					return
				}
			}
		})
	}
	wg.Wait()
}

// mustTicket, mustSubKey and mustChallenge are SignTicket, SubKey and
// SignChallenge for the tests' keys, which are long enough.
func mustTicket(key []byte, roomID string, n uint64) string {
	s, err := room.SignTicket(key, roomID, n)
	if err != nil {
		panic(err)
	}
	return s
}

func mustSubKey(key []byte, purpose string) []byte {
	k, err := room.SubKey(key, purpose)
	if err != nil {
		panic(err)
	}
	return k
}

func mustChallenge(key []byte, roomID string, c room.Challenge) string {
	s, err := room.SignChallenge(key, roomID, c)
	if err != nil {
		panic(err)
	}
	return s
}

// TestShortKeysRefused: every MAC function of the package refuses an empty
// or short key, and the parsers accept nothing made with one.
func TestShortKeysRefused(t *testing.T) {
	for _, key := range [][]byte{nil, {}, []byte("fifteen bytes.."), make([]byte, 15)} {
		if s, err := room.SignTicket(key, "r1", 1); !errors.Is(err, room.ErrShortKey) || s != "" {
			t.Errorf("SignTicket with a %d-byte key: %q %v", len(key), s, err)
		}
		if k, err := room.SubKey(key, "pow"); !errors.Is(err, room.ErrShortKey) || k != nil {
			t.Errorf("SubKey with a %d-byte key: %x %v", len(key), k, err)
		}
		c := room.Challenge{ID: [16]byte{1}, Bits: 1, Expires: time.Unix(1_900_000_000, 0)}
		if s, err := room.SignChallenge(key, "r1", c); !errors.Is(err, room.ErrShortKey) || s != "" {
			t.Errorf("SignChallenge with a %d-byte key: %q %v", len(key), s, err)
		}
		// A ticket and a challenge forged with the same short key, as an
		// attacker would make them for a node holding that key.
		forgedTicket := forgeTicket(key, "r1", 1)
		if n, err := room.ParseTicket(key, "r1", forgedTicket); !errors.Is(err, room.ErrShortKey) {
			t.Errorf("ParseTicket with a %d-byte key: %d %v, want ErrShortKey", len(key), n, err)
		}
		if _, err := room.ParseChallenge(key, "r1", forgeChallenge(key, "r1", c)); !errors.Is(err, room.ErrShortKey) {
			t.Errorf("ParseChallenge with a %d-byte key: %v, want ErrShortKey", len(key), err)
		}
	}
	// With a good key, a ticket of another key is refused as not issued.
	if _, err := room.ParseTicket(ticketKey, "r1", forgeTicket([]byte("another key of 16 bytes"), "r1", 1)); !errors.Is(err, room.ErrBadTicket) {
		t.Errorf("a ticket of another key: %v, want ErrBadTicket", err)
	}
	if err := room.CheckKey(make([]byte, room.MinKeyLen)); err != nil {
		t.Fatalf("CheckKey of %d bytes: %v", room.MinKeyLen, err)
	}
}

// forgeTicket builds a ticket by the documented encoding, without
// SignTicket's key check.
func forgeTicket(key []byte, roomID string, n uint64) string {
	var buf [8 + 16]byte
	binary.BigEndian.PutUint64(buf[:8], n)
	m := hmac.New(sha256.New, key)
	m.Write(binary.BigEndian.AppendUint64(append([]byte("ticket\x00"+roomID), 0), n))
	copy(buf[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

// forgeChallenge builds a challenge by the documented encoding, without
// SignChallenge's key check.
func forgeChallenge(key []byte, roomID string, c room.Challenge) string {
	var buf [1 + 8 + 1 + 16 + 16]byte
	buf[0] = 1
	binary.BigEndian.PutUint64(buf[1:9], uint64(c.Expires.Unix()))
	buf[9] = byte(c.Bits)
	copy(buf[10:26], c.ID[:])
	m := hmac.New(sha256.New, key)
	m.Write([]byte("pow\x00" + roomID + "\x00"))
	m.Write(buf[:26])
	copy(buf[26:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}
