package grain

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A member handing its rooms over activates none: its activation marker
// would fence off the member the room is moving to. Its grain stays not
// ready (calls are answered unavailable and retried) and writes nothing.
func TestLeavingMemberActivatesNoRoom(t *testing.T) {
	l := memlog.New()
	leaving := true
	g := &roomGrain{id: "r1", subs: map[string]*subscriber{}, log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		deps: &Deps{Log: l, Sealer: sealer, Hash: hash, Now: time.Now, WriteTimeout: time.Second, Leaving: func() bool { return leaving }}}
	records := func() int {
		n := 0
		if _, err := l.Replay(context.Background(), "r1", -1, func(persistence.Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	g.activate()
	if g.ready || records() != 0 {
		t.Fatalf("leaving: ready %v with %d records, want no activation and no marker", g.ready, records())
	}
	leaving = false
	g.activate()
	if !g.ready || records() != 1 {
		t.Fatalf("staying: ready %v with %d records, want an activation and its marker", g.ready, records())
	}
}
