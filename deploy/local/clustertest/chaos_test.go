package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/bench/histogram"
	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// The chaos soak (deploy/local/chaos.sh, and a step of deploy/local/test.sh):
// three members and a front node over a Kafka broker of its own, an
// open-loop on-sale into one room through the front (joins at a fixed rate
// plus status polls, sent on schedule whatever the answers, by bench/load's
// runner), and every chaosEvery a fault (chaos_faults_test.go): the room's
// host killed with SIGKILL and restarted chaosDown later on the same ports,
// two members killed at once, the broker stopped for 5 s. It holds that no
// number is answered twice, that every admission token granted stays valid
// and its ticket still gets a token, and that status polls fail only inside
// the fault windows; it reports the fail-over time over the kills of the
// room's host (p50, max), the joins lost per fault and the latency outside
// the windows.
//
// A fault window runs from a fault until chaosSettle after the killed
// members answer healthz again (the broker answers again): the room moves
// away at the kill and may move back once the member rejoins. A request is
// inside it when it was open at any moment of it.
//
// Environment: AQ_CHAOS_SOAK=1 runs it; AQ_CHAOS_SECONDS (default 60),
// AQ_CHAOS_JOIN_RATE (default 2000/s), AQ_CHAOS_POLL_RATE (default 500/s).

const (
	chaosEvery  = 4 * time.Second
	chaosDown   = 2 * time.Second
	chaosSettle = 3 * time.Second
	// chaosTimeout is each request's timeout: the grain call's own.
	chaosTimeout = 10 * time.Second
)

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}

// sent is one request of the soak, by its due time. The zero value is a
// request never sent: the open loop's in-flight bound was reached.
type sent struct {
	done    bool // the request was sent and ended
	due     time.Time
	latency time.Duration
	class   load.Class
	number  int64
	ticket  string
}

// kill is one fault of the soak (chaos_faults_test.go).
type kill struct {
	what                 string // killed, killed together, stopped the broker
	member               string // the members killed, or kafka
	hosted               bool   // a member killed hosted the room
	at, restart, healthy time.Time
}

// window reports whether a request open from due to end overlaps the
// kill's fail-over window: one sent just before the kill and answered
// after it waited for the fail-over too.
func (k kill) window(due, end time.Time) bool {
	return end.After(k.at) && due.Before(k.healthy.Add(chaosSettle))
}

// startFixedCluster is startCluster with every member's ports chosen below
// the ephemeral range, so a killed member restarts on the same ports.
func startFixedCluster(t *testing.T, brokers []string, options ...func(*cluster)) (*cluster, [][3]int) {
	t.Helper()
	c := &cluster{t: t, brokers: brokers, topics: newTopics(t, brokers), admin: "admin-" + randomHex(16), key: randomHex(32)}
	for _, o := range options {
		o(c)
	}
	base := testbin.FreeBlock(t, 11)
	ports := make([][3]int, 3)
	for i := range ports {
		ports[i] = [3]int{base + i, base + 3 + i, base + 6 + i}
		c.peers = append(c.peers, fmt.Sprintf("127.0.0.1:%d", ports[i][2]))
	}
	for i, p := range ports {
		c.members = append(c.members, c.start(fmt.Sprintf("member%d", i+1), true, p[0], p[1], p[2]))
	}
	c.front = c.start("front", false, base+9, base+10, 0)
	for _, p := range c.all() {
		p.waitHealthy(60 * time.Second)
	}
	c.waitReady(c.front, 60*time.Second)
	return c, ports
}

// ticketRing holds recent tickets for the status polls, and a few followed
// ones: every followEvery-th ticket is polled again and again while it is
// among the newest followed, so the history checker sees its place move.
type ticketRing struct {
	mu     sync.Mutex
	ring   []string // guarded by mu
	next   int
	added  int
	follow []string // guarded by mu: the newest followed tickets
}

const (
	followEvery = 500
	followed    = 16
)

func (r *ticketRing) add(tk string) {
	r.mu.Lock()
	if len(r.ring) < 4096 {
		r.ring = append(r.ring, tk)
	} else {
		r.ring[r.next%len(r.ring)] = tk
		r.next++
	}
	if r.added%followEvery == 0 {
		r.follow = append(r.follow, tk)
		if len(r.follow) > followed {
			r.follow = r.follow[1:]
		}
	}
	r.added++
	r.mu.Unlock()
}

// pick returns the ticket poll seq asks about: every other poll a followed
// ticket, the others any recent one.
func (r *ticketRing) pick(seq uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) == 0 {
		return ""
	}
	if seq%2 == 1 {
		return r.follow[(seq/2)%uint64(len(r.follow))]
	}
	return r.ring[seq%uint64(len(r.ring))]
}

// grantedToken is an admission token taken during the soak.
type grantedToken struct {
	ticket string
	number uint64
	token  string
	at     time.Time
}

func TestChaosSoak(t *testing.T) {
	if os.Getenv("AQ_CHAOS_SOAK") == "" {
		t.Skip("AQ_CHAOS_SOAK is not set: the chaos soak runs from deploy/local/chaos.sh or deploy/local/test.sh")
	}
	brokers(t)
	// A broker of the soak's own: one fault stops it.
	addr, broker := privateBroker(t)
	brokers := []string{addr}
	dur := time.Duration(envInt(t, "AQ_CHAOS_SECONDS", 60)) * time.Second
	joinRate := envInt(t, "AQ_CHAOS_JOIN_RATE", 2000)
	pollRate := envInt(t, "AQ_CHAOS_POLL_RATE", 500)

	c, ports := startFixedCluster(t, brokers)
	// Half the joins are admitted at once, so tokens are granted all along
	// while a line builds behind them.
	id, secret := c.createRoom(c.front, "chaos", float64(joinRate*60/2))
	base, _ := url.Parse(c.front.base)
	target := load.NewTarget(load.NewClient(1024, chaosTimeout), base, "chaos")
	if _, err := target.JoinMany(context.Background(), 16); err != nil {
		t.Fatalf("joins before the soak: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), dur+2*chaosTimeout+time.Minute)
	defer cancel()
	start := time.Now().Add(200 * time.Millisecond)
	joinSched := load.NewSchedule(start, float64(joinRate), dur, 0)
	pollSched := load.NewSchedule(start, float64(pollRate), dur, 0)
	joins := make([]sent, joinSched.Count)
	polls := make([]sent, pollSched.Count)
	var tickets ticketRing
	// Every operation answered, for the history checker
	// (chaos_history_test.go).
	var hist history
	var answered struct {
		mu   sync.Mutex
		list []sent // guarded by mu: the answered joins, in the order answered
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		load.OpenLoop(ctx, load.SystemClock{}, joinSched, 8000, load.NewRecorder(), func(ctx context.Context, seq uint64) load.Class {
			began := time.Now()
			tk, class := target.Join(ctx, true)
			if class == load.OK {
				hist.add(histOp{kind: opJoin, ticket: tk.Ticket, start: began, end: time.Now(), number: tk.Number,
					serving: tk.Serving, ahead: tk.Ahead, admitted: tk.Admitted})
			}
			joins[seq] = sent{done: true, due: joinSched.At(int(seq)), latency: time.Since(joinSched.At(int(seq))), class: class,
				number: tk.Number, ticket: tk.Ticket}
			if class == load.OK {
				tickets.add(tk.Ticket)
				answered.mu.Lock()
				answered.list = append(answered.list, joins[seq])
				answered.mu.Unlock()
			}
			return class
		})
	})
	wg.Go(func() {
		load.OpenLoop(ctx, load.SystemClock{}, pollSched, 4000, load.NewRecorder(), func(ctx context.Context, seq uint64) load.Class {
			due := pollSched.At(int(seq))
			tk := tickets.pick(seq)
			class := load.ClassInvalid // nothing to poll yet
			if tk != "" {
				began := time.Now()
				var st load.Ticket
				if st, class = target.StatusOf(ctx, tk); class == load.OK {
					hist.add(histOp{kind: opStatus, ticket: tk, start: began, end: time.Now(), number: st.Number,
						serving: st.Serving, ahead: st.Ahead, admitted: st.Admitted})
				}
			}
			polls[seq] = sent{done: true, due: due, latency: time.Since(due), class: class, ticket: tk}
			return class
		})
	})
	// Tokens all along: each tick, for the next answered join (admitted by
	// then: the line admits half the joins at once, numbers in the order
	// they are drawn).
	var tokens []grantedToken
	tokenDone := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for next := 0; ; next++ {
			select {
			case <-tokenDone:
				return
			case <-tick.C:
			}
			answered.mu.Lock()
			if next >= len(answered.list) {
				answered.mu.Unlock()
				next--
				continue
			}
			j := answered.list[next]
			answered.mu.Unlock()
			began := time.Now()
			st, m, err := call(c.front.base, "POST", "/queue/chaos/token", "", map[string]any{"ticket": j.ticket})
			if err == nil && (st == 200 || st == 425) {
				hist.add(histOp{kind: opToken, ticket: j.ticket, start: began, end: time.Now(), number: j.number, admitted: st == 200})
			}
			if err == nil && st == 200 {
				tokens = append(tokens, grantedToken{ticket: j.ticket, number: uint64(j.number), token: m["token"].(string), at: time.Now()})
			}
		}
	})

	rig := &chaosRig{t: t, c: c, ports: ports, room: id, broker: broker, start: start}
	kills := rig.run(start.Add(dur))
	time.Sleep(time.Until(start.Add(dur)))
	for _, p := range c.members {
		p.waitHealthy(60 * time.Second)
	}
	close(tokenDone)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the soak did not end in time: %v", ctx.Err())
	}
	for i := range joins {
		if !joins[i].done {
			joins[i] = sent{due: joinSched.At(i), class: load.ClassDropped}
		}
	}
	for i := range polls {
		if !polls[i].done {
			polls[i] = sent{due: pollSched.At(i), class: load.ClassDropped, ticket: "(not sent)"}
		}
	}

	inWindow := func(r sent) int {
		for i, k := range kills {
			if k.window(r.due, r.due.Add(r.latency)) {
				return i
			}
		}
		return -1
	}
	// No number answered twice, and none lower than one answered before
	// is answered after the faults.
	seen := map[int64]int{}
	var maxNumber int64
	for i, j := range joins {
		if j.class != load.OK {
			continue
		}
		if prev, dup := seen[j.number]; dup {
			t.Errorf("number %d answered twice (joins due at +%.3fs and +%.3fs)", j.number,
				joins[prev].due.Sub(start).Seconds(), j.due.Sub(start).Seconds())
		}
		seen[j.number] = i
		maxNumber = max(maxNumber, j.number)
	}
	// Figures per kill and outside the windows.
	type tally struct {
		joins, ok int
		lost      map[load.Class]int
		pollErr   int
	}
	per := make([]tally, len(kills))
	for i := range per {
		per[i].lost = map[load.Class]int{}
	}
	outside := histogram.New()
	var outsideJoins, outsideJoinErr, outsidePolls int
	outsideJoinClasses := map[load.Class]int{}
	for _, j := range joins {
		w := inWindow(j)
		if w < 0 {
			outsideJoins++
			if j.class == load.OK {
				outside.Record(j.latency)
			} else {
				outsideJoinErr++
				outsideJoinClasses[j.class]++
			}
			continue
		}
		per[w].joins++
		if j.class == load.OK {
			per[w].ok++
		} else {
			per[w].lost[j.class]++
		}
	}
	var pollErrOutside []sent
	for _, p := range polls {
		if p.ticket == "" {
			continue
		}
		w := inWindow(p)
		switch {
		case w < 0:
			outsidePolls++
			if p.class != load.OK {
				pollErrOutside = append(pollErrOutside, p)
			}
		case p.class != load.OK:
			per[w].pollErr++
		}
	}
	fo := failovers(kills, joins)
	if len(fo) > 0 {
		t.Logf("fail-over after SIGKILL of the room's host, kill to the first join answered: %d kills, p50 %v, max %v",
			len(fo), fo[len(fo)/2].Round(time.Millisecond), fo[len(fo)-1].Round(time.Millisecond))
	}
	first := firstAnswers(kills, joins)
	for i, k := range kills {
		t.Logf("fault %d, %s %s (hosting the room: %v): window %.1fs, %d joins due, %d answered, lost %v, %d status errors; first join answered %.2fs after the fault",
			i+1, k.what, k.member, k.hosted, k.healthy.Add(chaosSettle).Sub(k.at).Seconds(), per[i].joins, per[i].ok, per[i].lost,
			per[i].pollErr, first[i].Seconds())
	}
	t.Logf("outside the windows: %d joins due, %d failed %v, p50 %v p99 %v max %v; %d status polls, %d failed",
		outsideJoins, outsideJoinErr, outsideJoinClasses, outside.Quantile(0.5), outside.Quantile(0.99), outside.Max(),
		outsidePolls, len(pollErrOutside))
	t.Logf("in all: %d joins due at %d/s for %v, %d numbers answered (highest %d), %d tokens granted, %d kills",
		len(joins), joinRate, dur, len(seen), maxNumber, len(tokens), len(kills))
	// The history checker's verdict (chaos_history_test.go).
	if v := checkHistory(hist.ops); !v.ok {
		t.Errorf("history: %v", v)
	} else {
		t.Logf("history: %v", v)
	}
	for i, p := range pollErrOutside {
		if i == 10 {
			break
		}
		t.Errorf("status poll due at +%.3fs, outside every fail-over window, failed: %s", p.due.Sub(start).Seconds(), p.class)
	}

	// After the soak: every token granted verifies (offline and through
	// /verify), its ticket still gets a token, and the next join is
	// numbered above every number answered.
	if len(tokens) == 0 {
		t.Fatal("no token was granted during the soak")
	}
	var before int
	for _, g := range tokens {
		if len(kills) > 0 && g.at.Before(kills[len(kills)-1].at) {
			before++
		}
		if _, err := token.Verify([]byte(secret), "chaos", g.token, time.Now()); err != nil {
			t.Errorf("token of number %d (granted at +%.1fs) does not verify: %v", g.number, g.at.Sub(start).Seconds(), err)
		}
		st, m, err := call(c.front.base, "GET", "/queue/chaos/verify?token="+url.QueryEscape(g.token), "", nil)
		if err != nil || st != 200 || m["valid"] != true {
			t.Errorf("/verify of the token of number %d: %d %v %v", g.number, st, m, err)
		}
		st, m, err = call(c.front.base, "POST", "/queue/chaos/token", "", map[string]any{"ticket": g.ticket})
		if err != nil || st != 200 {
			t.Errorf("number %d, admitted at +%.1fs, gets no token after the soak: %d %v %v", g.number, g.at.Sub(start).Seconds(), st, m, err)
		}
	}
	t.Logf("%d tokens checked after the soak, %d of them granted before the last kill", len(tokens), before)
	var tk load.Ticket
	var class load.Class
	again := testwait.Poll(30*time.Second, 200*time.Millisecond, func() bool {
		tk, class = target.Join(context.Background(), true)
		return class == load.OK
	})
	if !again {
		t.Fatalf("no join answered within 30s after the soak (last %s)", class)
	}
	if tk.Number <= maxNumber {
		t.Errorf("join after the soak answered number %d, not above %d", tk.Number, maxNumber)
	}
}
