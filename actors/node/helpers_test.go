package node

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"
)

func startNodeLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
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
