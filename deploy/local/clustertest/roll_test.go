package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// rollJoin is one join of the roll's open loop.
type rollJoin struct {
	room   int
	end    time.Time
	class  load.Class
	number int64
}

// TestRollUnderLoad restarts every member in turn, gracefully (SIGTERM,
// started again on its ports once it has exited, the next one once it
// answers healthz and the others have taken it in), while an open loop
// sends joins into four rooms through the front node. A graceful roll
// loses nothing: every join is answered 200, no number twice in a room.
// It reports the longest pause of any room's joins. It runs with the chaos
// soak (AQ_CHAOS_SOAK=1), alone, as it loads the machine;
// AQ_ROLL_JOIN_RATE sets the rate (default 2000/s).
func TestRollUnderLoad(t *testing.T) {
	if os.Getenv("AQ_CHAOS_SOAK") == "" {
		t.Skip("AQ_CHAOS_SOAK is not set: the roll under load runs from deploy/local/chaos.sh or deploy/local/test.sh")
	}
	rate := envInt(t, "AQ_ROLL_JOIN_RATE", 2000)
	c, ports := startFixedCluster(t, brokers(t))
	base, _ := url.Parse(c.front.base)
	client := load.NewClient(1024, chaosTimeout)
	const rooms = 4
	var targets []*load.Target
	for i := range rooms {
		slug := fmt.Sprintf("roll-%d", i)
		c.createRoom(c.front, slug, 60_000)
		tg := load.NewTarget(client, base, slug)
		if _, err := tg.JoinMany(context.Background(), 8); err != nil {
			t.Fatalf("joins before the roll: %v", err)
		}
		targets = append(targets, tg)
	}

	// Load for as long as the roll takes, at most two minutes.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now().Add(100 * time.Millisecond)
	sched := load.NewSchedule(start, float64(rate), 2*time.Minute, 0)
	var mu sync.Mutex
	var joins []rollJoin
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		load.OpenLoop(ctx, load.SystemClock{}, sched, 8000, load.NewRecorder(), func(ctx context.Context, seq uint64) load.Class {
			r := int(seq % rooms)
			tk, class := targets[r].Join(ctx, true)
			if ctx.Err() != nil {
				return class // cut off by the end of the test, not answered
			}
			mu.Lock()
			joins = append(joins, rollJoin{room: r, end: time.Now(), class: class, number: tk.Number})
			mu.Unlock()
			return class
		})
	}()
	// everyRoomSince says whether every room has answered n joins that
	// ended after since.
	everyRoomSince := func(since time.Time, n int) bool {
		mu.Lock()
		defer mu.Unlock()
		per := make([]int, rooms)
		for _, j := range joins {
			if j.class == load.OK && j.end.After(since) {
				per[j.room]++
			}
		}
		return slices.Min(per) >= n
	}
	testwait.UntilEvery(t, time.Minute, 50*time.Millisecond, "joins into every room before the roll", func() bool { return everyRoomSince(start, 500) })
	var stops []string
	for i, m := range c.members {
		at := time.Now()
		m.term()
		stopped := time.Now()
		c.members[i] = c.start(m.name, true, ports[i][0], ports[i][1], ports[i][2])
		c.members[i].waitHealthy(60 * time.Second)
		// The others take it in within a round of health checks.
		time.Sleep(2 * time.Second)
		stops = append(stops, fmt.Sprintf("%s stopped at +%.1fs in %v, back in %v", m.name, at.Sub(start).Seconds(), stopped.Sub(at).Round(time.Millisecond),
			time.Since(stopped).Round(time.Millisecond)))
	}
	rolled := time.Now()
	testwait.UntilEvery(t, time.Minute, 50*time.Millisecond, "joins into every room after the roll", func() bool { return everyRoomSince(rolled, 50) })
	cancel()
	<-loopDone

	mu.Lock()
	defer mu.Unlock()
	byClass := map[load.Class]int{}
	seen := make([]map[int64]bool, rooms)
	ends := make([][]time.Time, rooms)
	for r := range seen {
		seen[r] = map[int64]bool{}
	}
	for _, j := range joins {
		byClass[j.class]++
		if j.class != load.OK {
			continue
		}
		if seen[j.room][j.number] {
			t.Errorf("room %d: number %d answered twice", j.room, j.number)
		}
		seen[j.room][j.number] = true
		ends[j.room] = append(ends[j.room], j.end)
	}
	var pause time.Duration
	pauseRoom := -1
	for r, es := range ends {
		slices.SortFunc(es, func(a, b time.Time) int { return a.Compare(b) })
		for k := 1; k < len(es); k++ {
			if d := es[k].Sub(es[k-1]); d > 500*time.Millisecond {
				t.Logf("room %d paused %v from +%.2fs", r, d.Round(time.Millisecond), es[k-1].Sub(start).Seconds())
			}
			if d := es[k].Sub(es[k-1]); d > pause {
				pause, pauseRoom = d, r
			}
		}
	}
	t.Logf("roll of %d members under %d joins/s into %d rooms: %v; %d joins answered %v; longest pause of a room's joins %v (room %d)",
		len(c.members), rate, rooms, stops, len(joins), byClass, pause.Round(time.Millisecond), pauseRoom)
	if len(joins) == 0 || byClass[load.OK] != len(joins) {
		t.Errorf("a graceful roll answered something other than 200: %v", byClass)
	}
}
