// Package nodetest starts real cluster nodes for the tests of the parts
// built on them (the HTTP front, the live dashboard, the instance reports,
// the Grafana dashboard's metrics): the real node, log and cipher, with
// the test's own defaults filled in.
package nodetest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
)

// Sealer is the real cipher under a fixed all-zero test key.
var Sealer = func() *seal.Sealer {
	s, err := seal.NewSealer(make([]byte, seal.KeySize))
	if err != nil {
		panic(err)
	}
	return s
}()

// Logger logs warnings and errors to stderr, where go test shows them for
// a failing test.
func Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Start starts cfg's node, a member unless cfg says otherwise, and stops
// it gracefully when the test ends: a killed node keeps polling for
// members and slows every later node of the process. Deps left zero are
// filled in: the embedded log in a temporary directory (closed after the
// node), Sealer, seal.HashSecret and Logger.
func Start(t testing.TB, cfg node.Config) *node.Node {
	t.Helper()
	d := &cfg.Deps
	if d.Log == nil {
		l, err := filelog.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		d.Log = l
	}
	if d.Sealer == nil {
		d.Sealer = Sealer
	}
	if d.Hash == nil {
		d.Hash = seal.HashSecret
	}
	if d.Logger == nil {
		d.Logger = Logger()
	}
	n, err := node.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
	return n
}

// BenchRoom starts a member on the embedded file log, logging nothing, and
// creates on it a room of 100,000 admissions a minute: the room the
// benchmarks of the grain's join path measure.
func BenchRoom(b *testing.B) (*node.Node, *protocol.CreateResult) {
	b.Helper()
	n := Start(b, node.Config{Member: true, Deps: grain.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cr, err := n.Client.Create(ctx, room.Config{Slug: "bench", Name: "Load test", TargetURL: "https://shop.example.com/",
		RatePerMinute: 100_000, Active: true}, "admin")
	if err != nil {
		b.Fatal(err)
	}
	return n, cr
}

// Eventually polls cond until it holds, and fails the test when d passes
// first: the way to wait for an event the test cannot be told of.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, d, what, cond)
}
