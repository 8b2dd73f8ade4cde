package membership

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aditus-queue/aditus-queue/persistence"
)

// The log as the cluster's witness (docs/architecture.md,
// "Failures: who serves"). A member that sees fewer than a majority of the
// members cannot tell from the member list whether the others died or it is
// cut off from them. The log can: every
// member records a heartbeat there (the latest snapshot of a stream of its
// own, named by its place in the peer list, holding its identity), and
// reads the others'. When the member list has stayed below the majority
// for the grace period, the heartbeats decide:
//
//   - a member it cannot see still heartbeats (it has been heartbeating,
//     unseen, for longer than witnessSettle): this member is the cut-off
//     side and ends, as before;
//   - every member it cannot see has been silent for longer than
//     witnessSilence: they are gone; this member stays and serves their
//     rooms (fencing keeps numbers unique, as always);
//   - this member has not reached the log for longer than the grace
//     period: it cannot know, and ends.
//
// witnessSettle covers a member that was restarted: it heartbeats under a
// new identity before this member's list takes it in (one TTL, or the
// provider's 2 s health timeout).

const (
	witnessEvery   = 500 * time.Millisecond
	witnessSilence = 2 * time.Second
	witnessSettle  = 4 * time.Second
	// witnessRead bounds one round of heartbeat reads and the write.
	witnessRead = time.Second
)

// heartbeatStream is the log stream of the member at peer address addr.
func heartbeatStream(addr string) string { return "cluster.heartbeat." + addr }

// heartbeat is a member's record in the log.
type heartbeat struct {
	ID string `json:"id"`
}

// peerBeat is what this member saw of one peer's heartbeats.
type peerBeat struct {
	id  string
	seq int64
	// advanced is when seq or id last changed (or when observation began).
	advanced time.Time
	// unseenSince is when the heartbeating identity was first found
	// missing from the member list; zero while it is in it.
	unseenSince time.Time
}

// Witness writes this member's heartbeats and follows the others'.
type Witness struct {
	log   persistence.Log
	self  string // this member's peer address
	id    string // this member's identity (the actor system's id)
	peers []string
	logf  *slog.Logger
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	mu sync.Mutex
	// mu guards the fields below.
	seq   int64
	beats map[string]*peerBeat // by peer address
	// logOK is when a whole round (write and reads) last succeeded.
	logOK time.Time
}

func NewWitness(l persistence.Log, self, id string, peers []string, log *slog.Logger, now time.Time) *Witness {
	return &Witness{log: l, self: self, id: id, peers: peers, logf: log, beats: map[string]*peerBeat{},
		logOK: now, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start heartbeats until close.
func (w *Witness) Start() {
	go func() {
		defer close(w.done)
		w.run(w.stop)
	}()
}

func (w *Witness) Close() {
	if w == nil {
		return
	}
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// round writes one heartbeat and reads every other peer's, at now.
func (w *Witness) round(ctx context.Context, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, witnessRead)
	defer cancel()
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	data, _ := json.Marshal(heartbeat{ID: w.id})
	if err := w.log.SaveSnapshot(ctx, heartbeatStream(w.self), persistence.Snapshot{Offset: seq, Data: data}); err != nil {
		return fmt.Errorf("write the heartbeat: %w", err)
	}
	for _, p := range w.peers {
		if p == w.self {
			continue
		}
		s, ok, err := w.log.LoadSnapshot(ctx, heartbeatStream(p))
		if err != nil {
			return fmt.Errorf("read the heartbeat of %s: %w", p, err)
		}
		var hb heartbeat
		if ok && json.Unmarshal(s.Data, &hb) != nil {
			ok = false
		}
		w.observe(p, hb.ID, s.Offset, ok, now)
	}
	w.mu.Lock()
	w.logOK = now
	w.mu.Unlock()
	return nil
}

// observe records peer p's heartbeat (ok false: none in the log) at now.
func (w *Witness) observe(p, id string, seq int64, ok bool, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.beats[p]
	if b == nil {
		b = &peerBeat{advanced: now}
		if ok {
			b.id, b.seq = id, seq
		}
		w.beats[p] = b
		return
	}
	if ok && (id != b.id || seq != b.seq) {
		if id != b.id {
			b.unseenSince = time.Time{}
		}
		b.id, b.seq, b.advanced = id, seq, now
	}
}

// verdict is the witness's answer for a member below the majority.
type verdict int

const (
	undecided verdict = iota
	othersGone
	cutOff
	logUnreachable
)

// judge answers, at now, given the identities in this member's list: are
// the members it cannot see gone, or is it cut off? It also returns a
// sentence on the peers it went by.
func (w *Witness) judge(visible map[string]bool, grace time.Duration, now time.Time) (verdict, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := now.Sub(w.logOK); d > grace {
		return logUnreachable, fmt.Sprintf("the log has not answered for %v", d.Round(time.Millisecond))
	}
	v, why := othersGone, ""
	for _, p := range w.peers {
		b := w.beats[p]
		if p == w.self || (b != nil && (b.id == w.id || visible[b.id])) {
			if b != nil {
				b.unseenSince = time.Time{}
			}
			continue
		}
		if b == nil {
			return undecided, "no heartbeat read yet"
		}
		// Silence is measured up to the last round that read the log:
		// rounds that failed saw nothing, so they prove no silence.
		silent := w.logOK.Sub(b.advanced)
		if silent > witnessSilence {
			why += fmt.Sprintf("; %s silent in the log for %v", p, silent.Round(time.Millisecond))
			continue
		}
		if b.unseenSince.IsZero() {
			b.unseenSince = now
		}
		if unseen := now.Sub(b.unseenSince); unseen >= witnessSettle {
			return cutOff, fmt.Sprintf("%s is out of sight for %v but heartbeats in the log", p, unseen.Round(time.Millisecond))
		}
		v = undecided
	}
	if len(why) > 2 {
		why = why[2:]
	}
	return v, why
}

// run writes and reads heartbeats every witnessEvery until stop closes.
func (w *Witness) run(stop <-chan struct{}) {
	t := time.NewTicker(witnessEvery)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	failing := false
	for {
		err := w.round(ctx, time.Now())
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			w.logf.Warn("cluster heartbeat in the log failed", "error", err)
		case err == nil && failing:
			w.logf.Info("cluster heartbeat in the log works again")
		}
		failing = err != nil
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
