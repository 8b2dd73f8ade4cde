package front

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/cluster"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/actors/wire"
)

// Client calls grains on behalf of front nodes. Every call is bounded by
// its context's deadline (or the default call timeout) and retried with
// back-off while the room's member is unreachable or being replaced.
type Client struct {
	cluster *cluster.Cluster
	timeout time.Duration
	log     *slog.Logger
	views   *Views
	members Members
	reach   Reach
	joins   *batcher
	// logErr reports this member's log failure (always nil on a front
	// alone).
	logErr func() error
}

// maxAttempt bounds one attempt of a call. An attempt on a member that dies
// is abandoned as soon as the member list drops it, and one whose grain
// moved to a member that joined as soon as the list says so; this bound is
// for a member that hangs without being dropped. (A shorter bound was
// tried: it cut short attempts that a member about to see the new list
// would have answered, and made a fail-over slower.)
const maxAttempt = 3 * time.Second

// errMemberLeft ends an attempt whose member left the cluster meanwhile;
// errClusterLost one made while the node lost every member.
var (
	errMemberLeft  = errors.New("member left the cluster")
	errClusterLost = errors.New("no cluster member reachable")
)

func (c *Client) call(ctx context.Context, identity, kind, op string, req, out any) error {
	body, err := protocol.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s request: %w", op, err)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.timeout)
	}
	// One command id for every attempt: a write retried after a late
	// answer is applied once (actors/grain, room_once.go).
	msg := &wire.Request{Op: op, Body: body, Id: protocol.CommandID(kind, op)}
	backoff := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		left := time.Until(deadline)
		if left <= 0 {
			return protocol.ErrUnavailable
		}
		lost := c.reach.LostCh()
		if isClosed(lost) {
			return protocol.ErrClusterUnavailable
		}
		res, err := c.attempt(ctx, identity, kind, msg, min(left, maxAttempt), lost)
		if err == nil {
			var final bool
			if final, err = answer(op, res, out); final {
				return err
			}
		}
		if ctx.Err() != nil {
			return protocol.ErrUnavailable
		}
		if c.logErr != nil && c.logErr() != nil {
			// This member's log failed for good: no retry can succeed
			// before the node restarts.
			return protocol.ErrLogUnavailable
		}
		if attempt == 0 || attempt%10 == 0 {
			c.log.Debug("grain call retry", "op", op, "identity", identity, "error", err)
		}
		if errors.Is(err, errClusterLost) {
			return protocol.ErrClusterUnavailable
		}
		if errors.Is(err, errMemberLeft) {
			// The grain is being placed on another member: go there now.
			continue
		}
		if err := pause(ctx, min(backoff, time.Until(deadline)), lost); err != nil {
			return err
		}
		if backoff < 500*time.Millisecond {
			backoff *= 2
		}
	}
}

// pause waits d before the next attempt; it answers for the call when ctx
// ends or no member is reachable first.
func pause(ctx context.Context, d time.Duration, lost <-chan struct{}) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return protocol.ErrUnavailable
	case <-lost:
		return protocol.ErrClusterUnavailable
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// answer reads a grain's answer into out. final is false when the answer
// is CodeUnavailable (err): the call tries again.
func answer(op string, res, out any) (final bool, err error) {
	r, ok := res.(*wire.Response)
	if !ok {
		return true, fmt.Errorf("%s: unexpected answer %T", op, res)
	}
	if r.Code == "" {
		if out != nil {
			return true, protocol.Unmarshal(r.Body, out)
		}
		return true, nil
	}
	e := &protocol.Error{Code: r.Code, Message: r.Message}
	if f, m, ok := strings.Cut(r.Message, "\x00"); ok {
		e.Field, e.Message = f, m
	}
	return e.Code != protocol.CodeUnavailable, e
}

// attempt makes one grain request, bounded by per and ctx. protoactor's
// request cannot be interrupted (placing a grain on a member that just died
// waits a fixed 5 s, whatever the timeout), so it runs on its own goroutine
// and is abandoned when per passes, ctx ends, the member it went to leaves
// the cluster or lost is closed (no member is reachable); an abandoned request ends on its own within seconds. The
// timeout is passed on every call: protoactor's RequestFuture with an option
// would change a package-wide default.
func (c *Client) attempt(ctx context.Context, identity, kind string, msg *wire.Request, per time.Duration, lost <-chan struct{}) (any, error) {
	type result struct {
		res any
		err error
	}
	t := time.NewTimer(per)
	defer t.Stop()
	// protoactor's identity lookup replaces its member list without a lock
	// while calls read it; waiting for the first list orders at least the
	// start (and no grain can be placed before it anyway).
	select {
	case <-c.members.Known():
	case <-lost:
		return nil, errClusterLost
	case <-t.C:
		return nil, fmt.Errorf("no cluster member known within %v", per)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.members.Await()
	addr := c.target(identity, kind)
	gone, release := c.members.Watch(addr)
	defer release()
	moved, releaseMove := c.members.WatchOwner(identity, kind, addr)
	defer releaseMove()
	done := make(chan result, 1)
	go func() {
		res, err := c.cluster.Request(identity, kind, msg, cluster.WithTimeout(per), cluster.WithRetryCount(1),
			cluster.WithRetryAction(func(i int) int { return i + 1 }))
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-gone:
		return nil, errMemberLeft
	case <-moved:
		// Placed again from the new member list, not the cache.
		c.cluster.PidCache.Remove(identity, kind)
		return nil, errMemberLeft
	case <-lost:
		return nil, errClusterLost
	case <-t.C:
		return nil, fmt.Errorf("no answer within %v", per)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// target is the address of the member a request for the grain goes to: the
// owner by the same rendezvous hash that places grains, which is the cached
// activation's member unless the member list changed since. "" when no
// member is known.
func (c *Client) target(identity, kind string) string {
	owner := c.members.Owner(identity, kind)
	if pid, ok := c.cluster.PidCache.Get(identity, kind); ok && pid != nil {
		if pid.Address == owner && c.members.IsMember(pid.Address) {
			return pid.Address
		}
		// Cached after its member left (the cache is cleared when the
		// member list changes, but an activation answered just before can
		// land after that), or on a member that no longer owns the grain
		// (a member joined: protoactor clears only the entries of members
		// that left, and the old owner stops the grain, so a request sent
		// there may never be answered): place the grain again.
		c.cluster.PidCache.RemoveByValue(identity, kind, pid)
	}
	return owner
}

// Join draws the next number of room id, in one batch with the other joins
// of the room on this node (batcher.go). It answers ErrLogUnavailable at
// once while the room's log cannot be written.
func (c *Client) Join(ctx context.Context, id string) (*protocol.JoinResult, error) {
	return c.joins.join(ctx, id)
}

// Token asks for number n's admission token.
func (c *Client) Token(ctx context.Context, id string, n uint64) (*protocol.TokenResult, error) {
	var r protocol.TokenResult
	return &r, c.call(ctx, id, protocol.KindRoom, protocol.OpToken, protocol.TokenRequest{Number: n}, &r)
}

// Redeem redeems a bypass code.
func (c *Client) Redeem(ctx context.Context, id, code string) (*protocol.TokenResult, error) {
	var r protocol.TokenResult
	return &r, c.call(ctx, id, protocol.KindRoom, protocol.OpRedeem, protocol.RedeemRequest{Code: code}, &r)
}

// Create claims the slug and creates the room.
func (c *Client) Create(ctx context.Context, cfg room.Config, actor string) (*protocol.CreateResult, error) {
	cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, protocol.ErrorOf(err)
	}
	id := protocol.NewRoomID()
	if err := c.call(ctx, protocol.DirectoryID, protocol.KindDirectory, protocol.OpClaim, protocol.DirectoryEntry{Slug: cfg.Slug, ID: id}, nil); err != nil {
		return nil, err
	}
	var r protocol.CreateResult
	if err := c.call(ctx, id, protocol.KindRoom, protocol.OpCreate, protocol.CreateRequest{Config: cfg, Actor: actor}, &r); err != nil {
		// Give the slug back; the room never existed.
		_ = c.call(context.Background(), protocol.DirectoryID, protocol.KindDirectory, protocol.OpRelease, protocol.DirectoryEntry{Slug: cfg.Slug, ID: id}, nil)
		return nil, err
	}
	c.views.offer(&r.View)
	return &r, nil
}

// Admin performs an administrative operation on room id: one of the
// operations of the room grain's table that take an AdminRequest.
func (c *Client) Admin(ctx context.Context, id, op string, req protocol.AdminRequest, out any) error {
	if !protocol.IsAdmin(op) {
		return fmt.Errorf("unknown admin operation %q", op)
	}
	err := c.call(ctx, id, protocol.KindRoom, op, req, out)
	if err == nil && op == protocol.OpDelete {
		if v, ok := out.(*room.View); ok {
			c.views.offer(v)
			_ = c.call(ctx, protocol.DirectoryID, protocol.KindDirectory, protocol.OpRelease, protocol.DirectoryEntry{Slug: v.Config.Slug, ID: id}, nil)
		}
	}
	if err == nil {
		if v, ok := out.(*room.View); ok {
			c.views.offer(v)
		}
	}
	return err
}

// List returns every room's directory entry.
func (c *Client) List(ctx context.Context) ([]protocol.DirectoryEntry, error) {
	var out []protocol.DirectoryEntry
	return out, c.call(ctx, protocol.DirectoryID, protocol.KindDirectory, protocol.OpList, protocol.DirectoryEntry{}, &out)
}

// Resolve returns the room id of slug.
func (c *Client) Resolve(ctx context.Context, slug string) (string, error) {
	var e protocol.DirectoryEntry
	if err := c.call(ctx, protocol.DirectoryID, protocol.KindDirectory, protocol.OpResolve, protocol.DirectoryEntry{Slug: slug}, &e); err != nil {
		return "", err
	}
	return e.ID, nil
}

// sync subscribes to room id's pushes and returns its current view.
func (c *Client) sync(ctx context.Context, id string, req protocol.SyncRequest) (*room.View, error) {
	var v room.View
	if err := c.call(ctx, id, protocol.KindRoom, protocol.OpSync, req, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
