package front

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// Room is what a front node holds of one room: the latest view and its
// opened keys. A Room value is immutable; updates replace it.
type Room struct {
	View      *room.View
	Secret    []byte
	TicketKey []byte
	// Unavailable says why the keys did not open on this node (empty when
	// they did); such a room is not served here (ErrRoomUnavailable).
	Unavailable string
}

// Views is a front node's cache of room views, kept fresh by pushes from
// the grains and by a sync every second for each room in use, so status,
// info and WebSocket answers need no cluster round trip.
type Views struct {
	client *Client
	sealer Opener
	log    *slog.Logger
	pid    *actor.PID
	system *actor.ActorSystem

	mu sync.RWMutex
	// mu guards rooms, slugs, used and listeners.
	rooms map[string]*Room
	slugs map[string]string
	used  map[string]time.Time
	seen  map[string]map[uint64]struct{}
	// confirmed is when a grain last answered each room's view, newer or
	// not: a view not confirmed for staleAfter is stale.
	confirmed map[string]time.Time
	listeners []func(id string, r *Room)
	locked    lockedRooms
	// lookups asks the directory for names not in slugs.
	lookups *slugLookups
	// seenDropped counts presence reports beyond maxSeenPerSync.
	seenDropped atomic.Uint64

	stopOnce sync.Once
	done     chan struct{}
	wg       sync.WaitGroup
}

const (
	syncInterval = time.Second
	// idleAfter stops syncing a room nobody asked about for this long.
	idleAfter   = 10 * time.Minute
	missTTL     = 2 * time.Second
	lookupLimit = 5 * time.Second
	// staleAfter marks a room's view stale when no grain has confirmed it
	// for this long: a room in use is synced every second.
	staleAfter = 3 * time.Second
)

func newViews(sys *actor.ActorSystem, c *Client, s Opener, log *slog.Logger, unavailable prometheus.Gauge) *Views {
	v := &Views{client: c, sealer: s, log: log, system: sys,
		rooms: map[string]*Room{}, slugs: map[string]string{}, lookups: newSlugLookups(),
		used: map[string]time.Time{}, seen: map[string]map[uint64]struct{}{}, confirmed: map[string]time.Time{},
		done: make(chan struct{})}
	v.locked.gauge = unavailable
	v.pid = sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if p, ok := ctx.Message().(*wire.Push); ok {
			var rv room.View
			if err := json.Unmarshal(p.View, &rv); err == nil {
				v.offer(&rv)
			}
		}
	}))
	v.wg.Add(1)
	go v.syncLoop()
	return v
}

// OnChange registers fn to be called after every accepted view update. fn
// runs on the updating goroutine and must not block.
func (v *Views) OnChange(fn func(id string, r *Room)) {
	v.mu.Lock()
	v.listeners = append(v.listeners, fn)
	v.mu.Unlock()
}

// offer installs rv if it is newer than the cached view.
func (v *Views) offer(rv *room.View) {
	if rv == nil || rv.ID == "" {
		return
	}
	v.mu.Lock()
	v.confirmed[rv.ID] = time.Now()
	old := v.rooms[rv.ID]
	if old != nil && !rv.Newer(old.View) {
		v.mu.Unlock()
		return
	}
	r := &Room{View: rv}
	if old != nil && old.Unavailable == "" && string(old.View.SecretSealed) == string(rv.SecretSealed) && string(old.View.TicketKeySealed) == string(rv.TicketKeySealed) {
		r.Secret, r.TicketKey = old.Secret, old.TicketKey
	} else if rv.Exists {
		var err error
		if r.Secret, r.TicketKey, err = openKeys(v.sealer, rv); err != nil {
			r.Unavailable = "the room's keys do not open with this node's master key: " + err.Error()
			if old == nil || old.Unavailable == "" {
				v.log.Error("room not served: its keys do not open (master key differs between nodes?)", "room", rv.ID, "error", err)
			}
		}
	}
	v.locked.set(rv, r.Unavailable)
	v.rooms[rv.ID] = r
	if rv.Exists && !rv.Deleted {
		v.slugs[rv.Config.Slug] = rv.ID
	} else if rv.Deleted && v.slugs[rv.Config.Slug] == rv.ID {
		delete(v.slugs, rv.Config.Slug)
	}
	if rv.Deleted {
		// Nothing of a deleted room changes any more: stop syncing it,
		// so that its grain can rest (rest.go).
		delete(v.used, rv.ID)
	}
	ls := v.listeners
	v.mu.Unlock()
	for _, fn := range ls {
		fn(rv.ID, r)
	}
}

// BySlug returns the room named slug, fetching it from the cluster on a
// miss. ok is false for an unknown (or deleted) room; err is set when the
// cluster could not be asked.
func (v *Views) BySlug(ctx context.Context, slug string) (*Room, bool, error) {
	return v.Lookup(ctx, slug, nil)
}

// Lookup is BySlug for a client whose lookups of names this node does not
// know are budgeted: allow (nil: no budget) is asked before each lookup
// sent to the directory, and a refusal is ErrTooManyLookups.
func (v *Views) Lookup(ctx context.Context, slug string, allow func() bool) (*Room, bool, error) {
	now := time.Now()
	// One read section for the name, the room and its last use: this is
	// every visitor request's path, and the write of the use happens once
	// a second at most.
	v.mu.RLock()
	id, known := v.slugs[slug]
	r := v.rooms[id]
	last := v.used[id]
	v.mu.RUnlock()
	if known && r != nil {
		if now.Sub(last) >= time.Second {
			v.markUsed(id, now)
		}
		return servable(r)
	}
	id, err := v.lookups.resolve(ctx, v.client, slug, now, allow)
	if err != nil || id == "" {
		return nil, false, err
	}
	r, err = v.ByID(ctx, id)
	if protocol.IsCode(err, protocol.CodeRoomUnavailable) {
		// The room's grain lives on this node and cannot open its keys:
		// counted, and said by the health check, as a view that does not
		// open here is.
		v.mu.Lock()
		v.locked.set(&room.View{ID: id, Exists: true, Config: room.Config{Slug: slug}},
			"the room's keys do not open with this node's master key")
		v.mu.Unlock()
	}
	if err != nil {
		return nil, false, err
	}
	return servable(r)
}

// servable is BySlug's answer for a cached room: ErrRoomUnavailable for a
// room whose keys did not open here.
func servable(r *Room) (*Room, bool, error) {
	if !r.View.Exists || r.View.Deleted {
		return r, false, nil
	}
	if r.Unavailable != "" {
		return nil, false, protocol.ErrRoomUnavailable
	}
	return r, true, nil
}

// ByID returns room id's cached view, syncing it first on a miss.
func (v *Views) ByID(ctx context.Context, id string) (*Room, error) {
	now := time.Now()
	v.mu.RLock()
	r := v.rooms[id]
	v.mu.RUnlock()
	if r != nil {
		v.touch(id, now)
		return r, nil
	}
	rv, err := v.client.sync(ctx, id, v.syncRequest(id))
	if err != nil {
		return nil, err
	}
	v.offer(rv)
	v.touch(id, now)
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.rooms[id], nil
}

// maxSeenPerSync bounds the presence reports of one room carried by one
// sync: about half a megabyte of JSON, well under the cluster's message
// limit. Beyond it a report is dropped and counted; a visitor reports again
// within the grace period (a page every 20 s or so), so only a front
// flooded far beyond its waiting visitors loses presence it needed.
const maxSeenPerSync = 1 << 16

// Seen records that number n of room id is present (heartbeat, socket);
// reports are forwarded to the grain in the next sync, one message a
// second per room. Beyond maxSeenPerSync distinct numbers of a room in one
// sync, reports are dropped (SeenDropped counts them).
func (v *Views) Seen(id string, n uint64) {
	v.mu.Lock()
	s := v.seen[id]
	if s == nil {
		s = map[uint64]struct{}{}
		v.seen[id] = s
	}
	if _, dup := s[n]; !dup {
		if len(s) < maxSeenPerSync {
			s[n] = struct{}{}
		} else {
			v.seenDropped.Add(1)
		}
	}
	v.mu.Unlock()
}

// SeenDropped returns how many presence reports were dropped because their
// room's sync was full.
func (v *Views) SeenDropped() uint64 { return v.seenDropped.Load() }

func (v *Views) touch(id string, now time.Time) {
	v.mu.RLock()
	last := v.used[id]
	v.mu.RUnlock()
	if now.Sub(last) < time.Second {
		return
	}
	v.markUsed(id, now)
}

func (v *Views) markUsed(id string, now time.Time) {
	v.mu.Lock()
	v.used[id] = now
	v.mu.Unlock()
}

func (v *Views) syncRequest(id string) protocol.SyncRequest {
	return protocol.SyncRequest{Address: v.pid.Address, ID: v.pid.Id}
}

func (v *Views) syncLoop() {
	defer v.wg.Done()
	t := time.NewTicker(syncInterval)
	defer t.Stop()
	for {
		select {
		case <-v.done:
			return
		case <-t.C:
		}
		now := time.Now()
		v.mu.Lock()
		var ids []string
		for id, at := range v.used {
			if now.Sub(at) > idleAfter {
				delete(v.used, id)
				delete(v.rooms, id)
				delete(v.confirmed, id)
				v.locked.forget(id)
				continue
			}
			ids = append(ids, id)
		}
		seen := v.seen
		v.seen = map[string]map[uint64]struct{}{}
		v.mu.Unlock()
		for _, id := range ids {
			req := v.syncRequest(id)
			for n := range seen[id] {
				req.Seen = append(req.Seen, n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			rv, err := v.client.sync(ctx, id, req)
			cancel()
			if err != nil {
				continue
			}
			v.offer(rv)
		}
	}
}

// Stop ends the views' sync loop and their push receiver.
func (v *Views) Stop() {
	v.stopOnce.Do(func() {
		close(v.done)
		v.wg.Wait()
	})
}

// Stale reports whether room id's view has gone without a grain's
// confirmation for longer than staleAfter (no member answers, or the room
// is moving to another member): pages then say they are reconnecting. It
// counts as a use of the room, which keeps it synced.
func (v *Views) Stale(id string) bool {
	now := time.Now()
	v.touch(id, now)
	v.mu.RLock()
	at, ok := v.confirmed[id]
	v.mu.RUnlock()
	return !ok || now.Sub(at) > staleAfter
}

// cached returns the cached room id without asking the cluster; nil when
// this node holds none.
func (v *Views) cached(id string) *Room {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.rooms[id]
}
