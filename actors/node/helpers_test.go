package node

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

func startNodeLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// mustStart starts cfg's node and fails the test when it does not start.
// Deps left zero are the tests' own: sealer, hash and startNodeLogger. It
// stops nothing: each test ends its nodes as its case needs.
func mustStart(t testing.TB, cfg Config) *Node {
	t.Helper()
	d := &cfg.Deps
	if d.Sealer == nil {
		d.Sealer = sealer
	}
	if d.Hash == nil {
		d.Hash = hash
	}
	if d.Logger == nil {
		d.Logger = startNodeLogger()
	}
	n, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mustCreate creates cfg's room through n as "admin" and fails the test
// when it cannot.
func mustCreate(t *testing.T, ctx context.Context, n *Node, cfg room.Config) *protocol.CreateResult {
	t.Helper()
	cr, err := n.Client.Create(ctx, cfg, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return cr
}

// stopNode stops n gracefully when the test ends: a killed node's provider
// keeps polling and delays the next node's first member list.
func stopNode(t *testing.T, n *Node) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
}
