package node

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

func createRoom(t *testing.T, n *Node, slug string, rate float64) (id string, r *front.Room) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr, err := n.Client.Create(ctx, room.Config{Slug: slug, Name: slug, TargetURL: "https://shop.example.com/",
		RatePerMinute: rate, Active: true}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := n.Views.BySlug(ctx, slug)
	if err != nil || !ok {
		t.Fatalf("BySlug: %v %v", ok, err)
	}
	return cr.View.ID, r
}

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
