package room_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The fuzz targets of the room's parsers of outside input: tickets, proof
// of work challenges and solutions, and the site configuration. Their seed
// corpora (f.Add and testdata/fuzz) run as ordinary tests;
// deploy/local/fuzz.sh fuzzes each for a few seconds.

var fuzzKey = []byte(strings.Repeat("k", 32))

// FuzzParseTicket: a ticket is accepted only as the exact text this room
// signed for its number (no second spelling of a ticket), never for
// number 0, and never for another room.
func FuzzParseTicket(f *testing.F) {
	good := mustTicket(fuzzKey, "room-a", 7)
	for _, s := range []string{good, good[:len(good)-1], good + "A", "", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		mustTicket(fuzzKey, "room-b", 7), mustTicket(fuzzKey, "room-a", 0), strings.ToUpper(good),
		strings.Repeat("/", 32), strings.Repeat("=", 32), "7", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ticket string) {
		n, err := room.ParseTicket(fuzzKey, "room-a", ticket)
		if err != nil {
			return
		}
		if n == 0 {
			t.Fatalf("ticket %q accepted for number 0", ticket)
		}
		if again := mustTicket(fuzzKey, "room-a", n); again != ticket {
			t.Fatalf("ticket %q accepted for %d, whose ticket is %q", ticket, n, again)
		}
		if _, err := room.ParseTicket(fuzzKey, "room-b", ticket); err == nil {
			t.Fatalf("ticket %q of room-a accepted by room-b", ticket)
		}
	})
}

// FuzzTicketRoundTrip: every number of every room round-trips.
func FuzzTicketRoundTrip(f *testing.F) {
	f.Add("room-a", uint64(1))
	f.Add("", uint64(1<<63))
	f.Add("r\x00oom", ^uint64(0))
	f.Fuzz(func(t *testing.T, id string, n uint64) {
		if n == 0 {
			return
		}
		s := mustTicket(fuzzKey, id, n)
		if got, err := room.ParseTicket(fuzzKey, id, s); err != nil || got != n {
			t.Fatalf("ticket of %d in %q reads %d, %v", n, id, got, err)
		}
		if _, err := room.ParseTicket(fuzzKey, id+"x", s); err == nil {
			t.Fatalf("ticket of %q accepted by %q", id, id+"x")
		}
	})
}

// FuzzParseChallenge: a challenge is accepted only as the exact text this
// room signed (so its id, which spends it, has one spelling), and its
// expiry and difficulty are what was signed.
func FuzzParseChallenge(f *testing.F) {
	key := mustSubKey(fuzzKey, "pow")
	c := room.Challenge{Bits: 12, Expires: time.Unix(1_900_000_000, 0)}
	copy(c.ID[:], "0123456789abcdef")
	good := mustChallenge(key, "room-a", c)
	for _, s := range []string{good, good[:len(good)-1], good + "A", "", strings.Repeat("A", len(good)),
		mustChallenge(key, "room-b", c), strings.Repeat("_", len(good))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ch, err := room.ParseChallenge(key, "room-a", s)
		if err != nil {
			return
		}
		if again := mustChallenge(key, "room-a", ch); again != s {
			t.Fatalf("challenge %q accepted as %+v, whose text is %q", s, ch, again)
		}
		if ch.Bits < 0 || ch.Bits > 255 || ch.Expires.Unix() < 0 {
			t.Fatalf("challenge %q decodes to %+v", s, ch)
		}
	})
}

// FuzzPowSolved: checking a solution never panics, refuses empty and
// over-long nonces, and agrees with itself at lower difficulty.
func FuzzPowSolved(f *testing.F) {
	f.Add("challenge", "0", 0)
	f.Add("challenge", room.SolvePow("challenge", 8), 8)
	f.Add("", "", 8)
	f.Add("c", strings.Repeat("9", room.MaxNonceLen+1), 0)
	f.Add("c", "1", 300)
	f.Add("c", "1", -5)
	f.Fuzz(func(t *testing.T, challenge, nonce string, bits int) {
		ok := room.PowSolved(challenge, nonce, bits)
		if ok && (nonce == "" || len(nonce) > room.MaxNonceLen) {
			t.Fatalf("nonce %q accepted", nonce)
		}
		if ok && bits > 256 {
			t.Fatalf("more zero bits (%d) than a SHA-256 has", bits)
		}
		if ok && bits > 0 && !room.PowSolved(challenge, nonce, bits-1) {
			t.Fatalf("solves at %d bits but not at %d", bits, bits-1)
		}
	})
}

// FuzzConfigJSON decodes a site configuration as the admin API does
// (active defaults to true), normalises and validates it. Invariants: it
// never panics; a configuration that validates is a fixed point: encoded
// as JSON and read back as the admin API reads it, it normalises and
// validates to the same JSON; and normalising twice changes nothing.
func FuzzConfigJSON(f *testing.F) {
	for _, s := range []string{
		`{"slug":"spring-sale","name":"Spring sale","targetUrl":"https://shop.example.com/","domains":["shop.example.com"],"ratePerMinute":2}`,
		`{"slug":"a","name":"A","ratePerMinute":1,"active":false,"domains":[" Shop.Example.COM. ","*.tickets.example.org"]}`,
		`{"slug":"x","name":"x","ratePerMinute":1e7,"tokenTtlSeconds":86400,"burstSeconds":60,"pow":{"enabled":true,"bits":24},
		  "opensAt":"2030-01-02T03:04:05.123456789+01:00","abandon":{"enabled":true,"graceSeconds":60},"allowBareNumber":true,
		  "autoRate":{"enabled":true,"healthUrl":"http://127.0.0.1:1/health","minRate":1,"maxRate":2,"intervalSeconds":5,
		  "rules":[{"metric":"responseTimeMs","op":">","value":-0.5}]},"message":"line\nbreak","accentColor":"#ABCDEF",
		  "headerImageUrl":"https://cdn.example.com/h.png"}`,
		`{"slug":"assets","name":"reserved","ratePerMinute":1}`,
		`{"slug":"a","name":" ","ratePerMinute":1}`,
		`{"slug":"a","name":"\ud800","ratePerMinute":1}`,
		`{"slug":"a","name":"a","ratePerMinute":1,"opensAt":"0001-01-01T00:00:00Z"}`,
		`{"slug":"a","name":"a","ratePerMinute":-0,"autoRate":{"minRate":-0}}`,
		`{"slug":"a","name":"a","ratePerMinute":1,"targetUrl":"javascript:alert(1)"}`,
		`{"slug":"a","name":"a","ratePerMinute":1,"domains":null,"autoRate":{"rules":null}}`,
		`{"slug":1}`, `[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := adminConfig(raw)
		var fe *room.FieldError
		if err != nil && !errors.As(err, &fe) && json.Valid(raw) && validateErr(err) {
			t.Fatalf("%v", err)
		}
		if err != nil {
			return
		}
		once, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("a valid configuration does not encode: %v (%+v)", err, cfg)
		}
		again := cfg
		again.Normalize()
		if b, _ := json.Marshal(again); !bytes.Equal(b, once) {
			t.Fatalf("normalising twice changes\n%s\ninto\n%s", once, b)
		}
		back, err := adminConfig(once)
		if err != nil {
			t.Fatalf("a valid configuration read back is refused: %v\n%s", err, once)
		}
		if twice, _ := json.Marshal(back); !bytes.Equal(twice, once) {
			t.Fatalf("a valid configuration does not round-trip:\n%s\n%s", once, twice)
		}
	})
}

// adminConfig reads a configuration as the admin API's create does.
func adminConfig(raw []byte) (room.Config, error) {
	cfg := room.Config{Active: true}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return cfg, err
	}
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		var fe *room.FieldError
		if !errors.As(err, &fe) {
			return cfg, &notFieldError{err}
		}
		return cfg, err
	}
	return cfg, nil
}

// notFieldError marks a Validate error that names no field: the admin API
// could not answer it as a 422 on a field.
type notFieldError struct{ error }

func validateErr(err error) bool {
	var nf *notFieldError
	return errors.As(err, &nf)
}
