package grain

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
)

// BenchmarkSeason writes a season of on-sales into the embedded log in
// compressed time and reports what is left: 100 rooms, AQ_SEASON_EVENTS
// events (default 10^7) of the hot path (reservations and checkpoints, four
// to an append), a snapshot every 500 events per room as the grain takes
// them, a season of 100 days on a fake clock with a 7-day retention window
// and a retention pass every simulated 12 hours. At the end it reports the
// disk in use, the index's memory and the Go heap, then reopens the log and
// times a busy room's activation through the grain. Run it once:
//
//	go test -run XXX -bench Season -benchtime 1x ./actors/grain
func BenchmarkSeason(b *testing.B) {
	total := 10_000_000
	if s := os.Getenv("AQ_SEASON_EVENTS"); s != "" {
		total, _ = strconv.Atoi(s)
	}
	const (
		rooms     = 100
		perAppend = 4
		season    = 100 * 24 * time.Hour
		window    = 7 * 24 * time.Hour
		segment   = 16 << 20
	)
	dir := b.TempDir()
	var simNS atomic.Int64
	start := time.Now()
	clock := func() time.Time { return start.Add(time.Duration(simNS.Load())) }
	opts := filelog.Options{SegmentSize: segment, Retention: window, Now: clock}
	l, err := filelog.OpenOptions(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deps := Deps{Log: l, Sealer: sealer, Hash: hash, Now: clock, Logger: quiet, WriteTimeout: 30 * time.Second}

	states := make([]*room.State, rooms)
	for i := range states {
		states[i] = seasonRoom(b, &deps, i)
	}
	var written, bytesWritten atomic.Int64
	perEvent := int64(season) / int64(total)
	var retainMu sync.Mutex
	var passes atomic.Int64
	retainEvery := int64(total) / 200 // every simulated 12 hours
	ctx := context.Background()
	t0 := time.Now()
	var wg sync.WaitGroup
	for i, st := range states {
		wg.Add(1)
		go func(i int, st *room.State) {
			defer wg.Done()
			sinceSnap, verified := 0, int64(-1)
			for k := 0; k < total/rooms; k += perAppend {
				now := clock().UnixNano()
				var data [][]byte
				var evs []room.Event
				for e := 0; e < perAppend; e++ {
					if e%2 == 0 {
						evs = append(evs, st.DecideReserve(st.Reserved+200, now)...)
					} else {
						st.Issued = st.Reserved
						evs = append(evs, st.DecideCheckpoint(now, false)...)
					}
					bs, err := evs[e].Encode()
					if err != nil {
						b.Error(err)
						return
					}
					data = append(data, bs)
					bytesWritten.Add(int64(len(bs)))
				}
				offs, err := l.Append(ctx, st.ID, data...)
				if err != nil {
					b.Error(err)
					return
				}
				for e := range evs {
					st.Apply(offs[e], evs[e])
				}
				verified = offs[len(offs)-1]
				if sinceSnap += perAppend; sinceSnap >= snapshotEvery {
					sinceSnap = 0
					snap, _ := json.Marshal(st)
					if err := l.SaveSnapshot(ctx, st.ID, persistence.Snapshot{Offset: verified, Data: snap}); err != nil {
						b.Error(err)
						return
					}
				}
				n := written.Add(perAppend)
				simNS.Store(n * perEvent)
				if n/retainEvery != (n-perAppend)/retainEvery && retainMu.TryLock() {
					if _, err := l.Retain(); err != nil {
						b.Error(err)
					}
					passes.Add(1)
					retainMu.Unlock()
				}
			}
		}(i, st)
	}
	wg.Wait()
	took := time.Since(t0)
	if _, err := l.Retain(); err != nil {
		b.Fatal(err)
	}
	disk, _ := l.DiskBytes()
	stats := l.Stats()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	in, _ := filelog.Inspect(dir, window, clock())
	var oldest int64 = -1
	for _, s := range in.Streams {
		if s.First >= 0 && (oldest < 0 || s.First < oldest) {
			oldest = s.First
		}
	}
	b.Logf("wrote %d events in %v (%.0f events/s), %d retention passes; simulated %v", written.Load(), took.Round(time.Second),
		float64(written.Load())/took.Seconds(), passes.Load(), time.Duration(simNS.Load()).Round(time.Hour))
	b.Logf("at the end: disk %.1f MiB in %d segments; index %.2f MiB over %d frames (%.1f B/frame); heap in use %.1f MiB",
		float64(disk)/(1<<20), len(in.Segments), float64(stats.IndexBytes)/(1<<20), stats.Frames,
		float64(stats.IndexBytes)/float64(max(1, stats.Frames)), float64(ms.HeapInuse)/(1<<20))
	// The bound: what the window holds of all that was written, framing
	// included (a frame of four events and its header cost about 40 bytes
	// more than the events), plus the segment the window's edge falls in
	// and the open one, plus the snapshots.
	framed := float64(bytesWritten.Load()) + float64(written.Load())/perAppend*40
	var snaps int64
	for _, st := range states {
		j, _ := json.Marshal(st)
		snaps += int64(len(j)) + 64
	}
	bound := int64(framed*float64(window)/float64(season)) + 2*segment + snaps
	b.Logf("events average %.0f bytes; bound %.1f MiB = %.1f MiB (7 of 100 days of %.0f MiB written, framed) + 2 segments of %d MiB + %.2f MiB of snapshots",
		float64(bytesWritten.Load())/float64(written.Load()), float64(bound)/(1<<20),
		framed*float64(window)/float64(season)/(1<<20), framed/(1<<20), segment>>20, float64(snaps)/(1<<20))
	if disk > bound {
		b.Errorf("disk %d bytes, above the bound %d", disk, bound)
	}
	b.ReportMetric(float64(disk)/(1<<20), "disk-MiB")
	b.ReportMetric(float64(stats.IndexBytes)/(1<<20), "index-MiB")
	b.ReportMetric(float64(stats.Frames), "frames-kept")
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}

	// A new process: open the log, then activate the busiest room.
	o0 := time.Now()
	l, err = filelog.OpenOptions(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	openTook := time.Since(o0)
	deps.Log = l
	sort.Slice(states, func(i, j int) bool { return states[i].Reserved > states[j].Reserved })
	g := newRoomGrain(&deps).(*roomGrain)
	g.id, g.log = states[0].ID, quiet
	a0 := time.Now()
	g.activate()
	actTook := time.Since(a0)
	if !g.ready || g.st.Issued < states[0].Reserved {
		b.Fatalf("activation: ready %v issued %d, want at least %d", g.ready, g.st.Issued, states[0].Reserved)
	}
	b.Logf("reopen %v; activation of the busiest room (issued %d) %v", openTook.Round(time.Millisecond), g.st.Issued, actTook.Round(time.Millisecond))
	b.ReportMetric(openTook.Seconds(), "open-s")
	b.ReportMetric(actTook.Seconds(), "activation-s")
}

// seasonRoom creates room i through a grain and returns its state.
func seasonRoom(b testing.TB, deps *Deps, i int) *room.State {
	g := newRoomGrain(deps).(*roomGrain)
	g.id, g.log = protocol.NewRoomID(), deps.Logger
	g.activate()
	if !g.ready {
		b.Fatal("activation failed")
	}
	now := deps.Now().UnixNano()
	evs, err := g.st.DecideCreate(room.Config{Slug: "season-" + strconv.Itoa(i), Name: "Season", RatePerMinute: 60000, Active: true},
		deps.Sealer.Seal([]byte(newSecret()), []byte("room:"+g.id+":secret")),
		deps.Sealer.Seal(protocol.RandomBytes(32), []byte("room:"+g.id+":ticket")), now, "admin", room.DrawKey{})
	if err != nil {
		b.Fatal(err)
	}
	data, err := evs[0].Encode()
	if err != nil {
		b.Fatal(err)
	}
	offs, err := deps.Log.Append(context.Background(), g.id, data)
	if err != nil {
		b.Fatal(err)
	}
	g.st.Apply(offs[0], evs[0])
	return g.st
}
