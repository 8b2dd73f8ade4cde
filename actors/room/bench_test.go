package room_test

import (
	"fmt"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// benchRoom is a running room with numbers reserved far ahead, so Join
// never needs a block.
func benchRoom(b *testing.B, rate float64) *grain {
	cfg := baseConfig()
	cfg.RatePerMinute = rate
	g := newRoom(b, cfg, at(0), 1<<40)
	if err := g.reserve(at(0)); err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkJoin(b *testing.B) {
	for _, bc := range []struct {
		name string
		rate float64
		gap  int64
	}{
		{"below the rate", 1e7, ms}, // every join re-bases the line
		{"queue", 60, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := benchRoom(b, bc.rate)
			now := at(0)
			b.ReportAllocs()
			for b.Loop() {
				now += bc.gap
				if _, err := g.st.Join(now); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "joins/s")
		})
	}
}

func BenchmarkStatusOf(b *testing.B) {
	b.Run("in arrival order", func(b *testing.B) {
		g := benchRoom(b, 600)
		for range 100_000 {
			g.st.Join(at(0))
		}
		b.ReportAllocs()
		var n uint64
		for b.Loop() {
			n = n%100_000 + 1
			_ = g.st.StatusOf(n, at(minute))
		}
	})
	b.Run("drawn", func(b *testing.B) {
		cfg := baseConfig()
		cfg.OpensAt = timeAt(hour)
		g := newRoom(b, cfg, at(0), 1<<40)
		for range 100_000 {
			g.mustJoin(at(minute))
		}
		g.must(g.open(at(hour)))
		b.ReportAllocs()
		var n uint64
		for b.Loop() {
			n = n%100_000 + 1
			_ = g.st.StatusOf(n, at(hour+minute))
		}
	})
}

func BenchmarkServingAt(b *testing.B) {
	g := benchRoom(b, 600)
	for range 1000 {
		g.st.Join(at(0))
	}
	v := &g.st.View
	now := at(0)
	b.ReportAllocs()
	for b.Loop() {
		now += ms
		_ = v.ServingAt(now)
	}
}

// BenchmarkDrawPosition compares the older draw (SplitMix64 rounds) with
// the committed one (AES-256 rounds, a cipher set up per call) on the
// status path's cost of one position.
func BenchmarkDrawPosition(b *testing.B) {
	seed := make([]byte, room.DrawKeySize)
	for _, kind := range []struct {
		name string
		d    func(size uint64) room.Draw
	}{
		{"uncommitted", func(size uint64) room.Draw { return room.Draw{To: size, Key: []byte("opening key")} }},
		{"committed", func(size uint64) room.Draw { return room.Draw{To: size, Version: room.DrawVersion, Seed: seed} }},
	} {
		for _, size := range []uint64{1000, 1_000_000, 1_000_000_000} {
			b.Run(fmt.Sprint(kind.name, "/", size), func(b *testing.B) {
				d := kind.d(size)
				b.ReportAllocs()
				var n uint64
				for b.Loop() {
					n = n%size + 1
					_ = d.Position(n)
				}
			})
		}
	}
}

func BenchmarkParseTicket(b *testing.B) {
	tk := mustTicket(ticketKey, "r1", 123456)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := room.ParseTicket(ticketKey, "r1", tk); err != nil {
			b.Fatal("refused")
		}
	}
}

func BenchmarkSignTicket(b *testing.B) {
	b.ReportAllocs()
	var n uint64
	for b.Loop() {
		n++
		_, _ = room.SignTicket(ticketKey, "r1", n)
	}
}

// BenchmarkCodeLookup times the decision of one code redemption and one
// API key lookup in a room with 10,000 of each (after a first lookup).
func BenchmarkCodeLookup(b *testing.B) {
	g := manyCodes(b, 10_000)
	g.st.KeyByHash(hash("key-0"))
	b.Run("redeem", func(b *testing.B) {
		h := hash("code-5000")
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := g.st.DecideRedeem(h, at(minute)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("key", func(b *testing.B) {
		h := hash("key-5000")
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := g.st.KeyByHash(h); !ok {
				b.Fatal("key not found")
			}
		}
	})
}
