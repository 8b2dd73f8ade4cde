package grain

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence/kafkalog/kafkatest"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/persistence/kafkalog"
)

// replayEvents is how many reservation and checkpoint events stand in the
// room's log, after its last snapshot, when it is activated.
const replayEvents = 1_000_000

// BenchmarkActivationReplay times a room's activation (snapshot load,
// marker, replay of every event through Apply, read-back) when 10^6 events
// follow its last snapshot: the worst case of a room whose snapshots all
// failed. Run it with -benchtime 3x; the kafka case needs AQ_KAFKA_BROKERS.
func BenchmarkActivationReplay(b *testing.B) {
	b.Run("filelog", func(b *testing.B) {
		l, err := filelog.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		benchReplay(b, l)
	})
	b.Run("kafka", func(b *testing.B) {
		bs := kafkatest.Brokers(b)
		events, snapshots := kafkatest.Topics(b, bs)
		cfg := kafkalog.Config{Brokers: bs, EventsTopic: events, SnapshotsTopic: snapshots, Partitions: 1}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l, err := kafkalog.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		benchReplay(b, l)
	})
}

func benchReplay(b *testing.B, l persistence.Log) {
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deps := Deps{Log: l, Sealer: sealer, Hash: hash, Now: time.Now, Logger: quiet, WriteTimeout: 30 * time.Second}

	// Create the room through a grain, as a member would.
	g := newRoomGrain(&deps).(*roomGrain)
	g.id, g.log = protocol.NewRoomID(), quiet
	// Topics just created may not have a leader for a moment.
	testwait.Poll(5*time.Second, 250*time.Millisecond, func() bool {
		g.activate()
		return g.ready
	})
	if !g.ready {
		b.Fatal("first activation failed")
	}
	evs, err := g.st.DecideCreate(room.Config{Slug: "replay", Name: "Replay", RatePerMinute: 60000, Active: true},
		sealer.Seal([]byte("secret"), []byte("room:"+g.id+":secret")),
		sealer.Seal(protocol.RandomBytes(32), []byte("room:"+g.id+":ticket")), time.Now().UnixNano(), "admin", room.DrawKey{})
	if err != nil {
		b.Fatal(err)
	}
	st := g.st
	ctx := context.Background()
	appendAll := func(evs []room.Event) {
		data := make([][]byte, len(evs))
		for i := range evs {
			if data[i], err = evs[i].Encode(); err != nil {
				b.Fatal(err)
			}
		}
		offs, err := l.Append(ctx, g.id, data...)
		if err != nil {
			b.Fatal(err)
		}
		for i := range evs {
			st.Apply(offs[i], evs[i])
		}
	}
	appendAll(evs)

	// 10^6 events of the hot path: a reservation of 100 numbers, 100 joins,
	// a checkpoint, and so on, appended in batches of 1,000.
	start := time.Now()
	var batch []room.Event
	for i := 0; i < replayEvents; i++ {
		now := time.Now().UnixNano()
		if i%2 == 0 {
			batch = append(batch, st.DecideReserve(st.Reserved+100, now)...)
		} else {
			st.Issued = st.Reserved
			batch = append(batch, st.DecideCheckpoint(now, false)...)
		}
		if len(batch) == 1000 {
			appendAll(batch)
			batch = batch[:0]
		}
	}
	appendAll(batch)
	b.Logf("appended %d events in %v", replayEvents, time.Since(start).Round(time.Millisecond))
	want := st.Reserved

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := newRoomGrain(&deps).(*roomGrain)
		g.id, g.log = st.ID, quiet
		t0 := time.Now()
		g.activate()
		if !g.ready {
			b.Fatal("activation failed")
		}
		if g.st.Issued < want {
			b.Fatalf("after replay issued %d, want at least %d", g.st.Issued, want)
		}
		b.ReportMetric(float64(replayEvents)/time.Since(t0).Seconds(), "events/s")
	}
}
