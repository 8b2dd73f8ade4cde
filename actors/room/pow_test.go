package room_test

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func powKey() []byte { return mustSubKey([]byte("ticket key of r1"), "pow") }

func TestChallengeRoundTrip(t *testing.T) {
	c := room.Challenge{ID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Bits: 15,
		Expires: time.Unix(0, at(5*minute)).Add(123 * time.Millisecond)}
	s := mustChallenge(powKey(), "r1", c)
	if strings.ContainsAny(s, "+/=.") {
		t.Fatalf("challenge %q is not plain base64url", s)
	}
	got, err := room.ParseChallenge(powKey(), "r1", s)
	if err != nil {
		t.Fatalf("ParseChallenge(%q) refused its own challenge", s)
	}
	if got.ID != c.ID || got.Bits != 15 || !got.Expires.Equal(c.Expires.Truncate(time.Second)) {
		t.Fatalf("got %+v, want %+v (expiry to the second)", got, c)
	}
}

func TestChallengeRefused(t *testing.T) {
	c := room.Challenge{ID: [16]byte{9}, Bits: 12, Expires: time.Unix(0, at(5*minute))}
	good := mustChallenge(powKey(), "r1", c)
	flip := []byte(good)
	if flip[20] == 'A' {
		flip[20] = 'B'
	} else {
		flip[20] = 'A'
	}
	for _, tc := range []struct {
		name, room, challenge string
		key                   []byte
	}{
		{"other room", "r2", good, powKey()},
		{"other key", "r1", good, mustSubKey([]byte("ticket key of r1"), "ticket")},
		{"tampered", "r1", string(flip), powKey()},
		{"truncated", "r1", good[:len(good)-1], powKey()},
		{"extended", "r1", good + "A", powKey()},
		{"empty", "r1", "", powKey()},
		{"not base64", "r1", strings.Repeat("!", len(good)), powKey()},
		{"a ticket", "r1", mustTicket([]byte("ticket key of r1"), "r1", 1), powKey()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := room.ParseChallenge(tc.key, tc.room, tc.challenge); err == nil {
				t.Fatalf("ParseChallenge accepted %q", tc.challenge)
			}
		})
	}
}

func TestPowSolved(t *testing.T) {
	ch := mustChallenge(powKey(), "r1", room.Challenge{ID: [16]byte{7}, Bits: 12, Expires: time.Unix(0, at(0))})
	for _, bits := range []int{0, 1, 8, 12, 15} {
		nonce := room.SolvePow(ch, bits)
		if !room.PowSolved(ch, nonce, bits) {
			t.Fatalf("%d bits: SolvePow's nonce %q does not solve", bits, nonce)
		}
		sum := sha256.Sum256([]byte(ch + "." + nonce))
		for i := 0; i < bits; i++ {
			if sum[i/8]>>(7-i%8)&1 != 0 {
				t.Fatalf("%d bits: hash %x has bit %d set", bits, sum, i)
			}
		}
		if n, _ := strconv.Atoi(nonce); n > 0 && room.PowSolved(ch, strconv.Itoa(n-1), bits) {
			t.Fatalf("%d bits: %d is not the smallest nonce", bits, n)
		}
	}
	nonce := room.SolvePow(ch, 12)
	// Find a nonce that solves 12 bits but not 13, to check the boundary.
	for n := 0; ; n++ {
		s := strconv.Itoa(n)
		if room.PowSolved(ch, s, 12) && !room.PowSolved(ch, s, 13) {
			break
		}
		if n > 1<<20 {
			t.Fatal("no nonce with exactly 12 leading zero bits")
		}
	}
	for _, tc := range []struct {
		name, challenge, nonce string
		bits                   int
		want                   bool
	}{
		{"solution", ch, nonce, 12, true},
		{"easier difficulty", ch, nonce, 8, true},
		{"empty nonce", ch, "", 0, false},
		{"over-long nonce", ch, strings.Repeat("1", room.MaxNonceLen+1), 0, false},
		{"other challenge", ch + "x", nonce, 12, room.PowSolved(ch+"x", nonce, 12)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := room.PowSolved(tc.challenge, tc.nonce, tc.bits); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// BenchmarkSolvePow measures the work a visitor does per join, by
// difficulty (one challenge per iteration, so the mean covers the spread).
func BenchmarkSolvePow(b *testing.B) {
	for _, bits := range []int{8, 12, 15, 18} {
		b.Run("bits="+strconv.Itoa(bits), func(b *testing.B) {
			b.ReportAllocs()
			hashes := 0
			for i := 0; b.Loop(); i++ {
				var id [16]byte
				id[0], id[1], id[2] = byte(i), byte(i>>8), byte(i>>16)
				ch := mustChallenge(powKey(), "r1", room.Challenge{ID: id, Bits: bits, Expires: time.Unix(0, at(0))})
				n, _ := strconv.Atoi(room.SolvePow(ch, bits))
				hashes += n + 1
			}
			b.ReportMetric(float64(hashes)/float64(b.N), "hashes/op")
		})
	}
}

func BenchmarkPowCheck(b *testing.B) {
	key := powKey()
	ch := mustChallenge(key, "r1", room.Challenge{ID: [16]byte{3}, Bits: 15, Expires: time.Unix(0, at(0))})
	nonce := room.SolvePow(ch, 15)
	b.ReportAllocs()
	for b.Loop() {
		c, err := room.ParseChallenge(key, "r1", ch)
		if err != nil || !room.PowSolved(ch, nonce, c.Bits) {
			b.Fatal("refused")
		}
	}
}
