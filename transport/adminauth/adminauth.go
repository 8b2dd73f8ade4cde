// Package adminauth decides who an admin credential stands for: the
// operator (the admin token) or one room's API key (qak_<room>_…). The
// admin API, the live dashboard socket and the load-test socket all ask
// it, so a credential means the same everywhere and is checked once per
// few seconds, not once per request or socket.
//
// Failed attempts are limited per client address (transport/clientaddr):
// after FailureBurst failures an address is refused (ErrLimited, 429) until
// its budget refills at FailuresPerMinute. Successful sign-ins spend
// nothing, and other addresses are not affected. Tokens are compared by
// their hashes in constant time.
package adminauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
	"github.com/aditus-queue/aditus-queue/transport/ratelimit"
)

// Principal is who a credential stands for.
type Principal struct {
	// Operator is true for the admin token, which reaches every room.
	Operator bool
	// RoomID is the room a key belongs to; KeyHash is the key's hash, as
	// its room's grain stores it (empty for the operator).
	RoomID  string
	KeyHash []byte
}

// Directory is what the authenticator asks of the cluster: the list of
// rooms, and a room's grain whether a key stands. *front.Client is one.
type Directory interface {
	List(ctx context.Context) ([]protocol.DirectoryEntry, error)
	Admin(ctx context.Context, id, op string, req protocol.AdminRequest, out any) error
}

// Refusals. A *Limited is returned for an address over its budget.
var (
	ErrNoToken  = errors.New("missing credentials")
	ErrBadToken = errors.New("invalid credentials")
	// ErrBusy: the cluster could not be asked; the attempt is not counted.
	ErrBusy = errors.New("the cluster did not answer")
)

// Limited is the refusal of an address that failed too often.
type Limited struct{ RetryAfter time.Duration }

func (l *Limited) Error() string { return "too many failed sign-ins from this address" }

// Failure budget per client address.
const (
	FailuresPerMinute = 10
	FailureBurst      = 10
	// maxAddresses bounds the addresses whose failures are remembered
	// (least recently failed forgotten first).
	maxAddresses = 65536
	// cacheTTL is how long a room list or a key's check is trusted.
	cacheTTL = 3 * time.Second
	// maxCached bounds the keys remembered between checks.
	maxCached = 4096
)

// Config wires an Authenticator.
type Config struct {
	Directory Directory
	// AdminHash is the hash (Hash) of the operator's token; empty, no
	// credential is the operator's.
	AdminHash []byte
	// Hash hashes tokens and keys the way they are stored.
	Hash func(string) []byte
	// Clients finds a request's client address (nil: the peer's).
	Clients *clientaddr.Resolver
	// Now is the clock of the caches and the failure budget (default
	// time.Now).
	Now func() time.Time
}

// Authenticator checks admin credentials. It is safe for concurrent use.
type Authenticator struct {
	dir       Directory
	adminHash []byte
	hash      func(string) []byte
	clients   *clientaddr.Resolver
	now       func() time.Time
	failures  *ratelimit.Limiter
	// pending counts admin sockets upgraded and not signed in yet;
	// pendingRefused, the upgrades refused for it.
	pending        atomic.Int64
	pendingRefused atomic.Uint64

	mu      sync.Mutex // guards the two caches below
	rooms   map[string]struct{}
	roomsAt time.Time
	keys    map[string]keyCheck // by key hash
}

type keyCheck struct {
	p  Principal
	at time.Time
}

// New returns an Authenticator; it refuses a config without a directory or
// a hash function.
func New(c Config) (*Authenticator, error) {
	if c.Directory == nil || c.Hash == nil {
		return nil, errors.New("adminauth: a directory and a hash function are required")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Clients == nil {
		c.Clients = clientaddr.NewResolver(nil)
	}
	lim, err := ratelimit.New(ratelimit.Config{Rate: FailuresPerMinute / 60.0, Burst: FailureBurst,
		Capacity: maxAddresses, Now: c.Now, Groups: clientaddr.Wider, Scales: clientaddr.WiderScales})
	if err != nil {
		return nil, err
	}
	return &Authenticator{dir: c.Directory, adminHash: c.AdminHash, hash: c.Hash, clients: c.Clients, now: c.Now,
		failures: lim, keys: map[string]keyCheck{}}, nil
}

// Clients is the resolver of client addresses the authenticator keys on.
func (a *Authenticator) Clients() *clientaddr.Resolver { return a.clients }

// Limited returns how long r's client must wait before its next attempt
// (0: it may try now), without spending anything.
func (a *Authenticator) Limited(r *http.Request) time.Duration {
	return a.failures.Wait(clientaddr.Key(a.clients.Client(r)))
}

// Authenticate is a sign-in by r's client with token: the principal, or
// ErrNoToken, ErrBadToken (counted against the client's address), ErrBusy,
// or a *Limited once the address failed too often.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request, token string) (Principal, error) {
	key := clientaddr.Key(a.clients.Client(r))
	if wait := a.failures.Wait(key); wait > 0 {
		return Principal{}, &Limited{RetryAfter: wait}
	}
	p, err := a.Principal(ctx, token)
	if errors.Is(err, ErrBadToken) {
		if ok, wait := a.failures.Allow(key); !ok {
			return Principal{}, &Limited{RetryAfter: wait}
		}
	}
	return p, err
}

// Principal checks token without a client address, for credentials
// checked again while a socket they opened stays open. Nothing is counted.
func (a *Authenticator) Principal(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrNoToken
	}
	h := a.hash(token)
	if len(a.adminHash) > 0 && subtle.ConstantTimeCompare(h, a.adminHash) == 1 {
		return Principal{Operator: true}, nil
	}
	rest, ok := strings.CutPrefix(token, "qak_")
	if !ok {
		return Principal{}, ErrBadToken
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok || id == "" {
		return Principal{}, ErrBadToken
	}
	if p, ok := a.cachedKey(h); ok {
		return p, nil
	}
	known, err := a.KnownRoom(ctx, id)
	if err != nil {
		return Principal{}, ErrBusy
	}
	if !known {
		return Principal{}, ErrBadToken
	}
	err = a.dir.Admin(ctx, id, protocol.OpAuthKey, protocol.AdminRequest{KeyHash: h}, nil)
	switch {
	case protocol.IsCode(err, protocol.CodeUnauthorized), protocol.IsCode(err, protocol.CodeNotFound), protocol.IsCode(err, protocol.CodeForbidden):
		return Principal{}, ErrBadToken
	case err != nil:
		return Principal{}, ErrBusy
	}
	p := Principal{RoomID: id, KeyHash: h}
	a.cacheKey(h, p)
	return p, nil
}

func (a *Authenticator) cachedKey(h []byte) (Principal, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.keys[string(h)]
	if !ok || a.now().Sub(c.at) >= cacheTTL {
		return Principal{}, false
	}
	return c.p, true
}

func (a *Authenticator) cacheKey(h []byte, p Principal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.keys) >= maxCached {
		a.keys = map[string]keyCheck{}
	}
	a.keys[string(h)] = keyCheck{p: p, at: a.now()}
}

// KnownRoom reports whether id is a room of the directory, from a list
// fetched at most once per few seconds, so that credentials naming random
// ids never activate grains. err is set when the list could not be had.
func (a *Authenticator) KnownRoom(ctx context.Context, id string) (bool, error) {
	return a.knownRoom(ctx, id, false)
}

// RoomExists is KnownRoom for a signed-in operator: a room missing from
// the cached list is looked for in a fresh one, so a room created on
// another node is found at once.
func (a *Authenticator) RoomExists(ctx context.Context, id string) (bool, error) {
	return a.knownRoom(ctx, id, true)
}

func (a *Authenticator) knownRoom(ctx context.Context, id string, refetch bool) (bool, error) {
	a.mu.Lock()
	fresh := a.rooms != nil && a.now().Sub(a.roomsAt) < cacheTTL
	_, ok := a.rooms[id]
	a.mu.Unlock()
	if ok || (fresh && !refetch) {
		return ok, nil
	}
	list, err := a.dir.List(ctx)
	if err != nil {
		return false, err
	}
	ids := make(map[string]struct{}, len(list))
	for _, e := range list {
		ids[e.ID] = struct{}{}
	}
	a.mu.Lock()
	a.rooms, a.roomsAt = ids, a.now()
	a.mu.Unlock()
	_, ok = ids[id]
	return ok, nil
}

// RoomsChanged is told that this node created or deleted a room: the room
// list is fetched again at the next check, and a deleted room ("" for
// none) is forgotten with its keys at once.
func (a *Authenticator) RoomsChanged(deleted string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.roomsAt = time.Time{}
	if deleted == "" {
		return
	}
	delete(a.rooms, deleted)
	for h, c := range a.keys {
		if c.p.RoomID == deleted {
			delete(a.keys, h)
		}
	}
}

// LimitedMessage is the sentence of a sign-in refused for too many
// failures.
const LimitedMessage = "Too many failed sign-ins from this address; try again after the seconds in Retry-After."

// RefuseLimited answers 429 rate_limited with Retry-After, before an admin
// socket is upgraded, when r's client may not try now; it reports whether
// it answered.
func (a *Authenticator) RefuseLimited(w http.ResponseWriter, r *http.Request) bool {
	wait := a.Limited(r)
	if wait <= 0 {
		return false
	}
	w.Header().Set("Retry-After", ratelimit.RetryAfter(wait))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"error":"rate_limited","message":"` + LimitedMessage + `"}`))
	return true
}

// MaxPendingSockets bounds the admin sockets of this node (the live
// dashboards and the load tests' feeds together) that are upgraded but
// have not signed in yet: each holds a connection for up to
// adminws.AuthTimeout. Beyond it an upgrade is refused before it happens.
const MaxPendingSockets = 64

// PendingSocket reserves a place for an admin socket about to be upgraded
// that has yet to sign in. With MaxPendingSockets taken, it answers 503
// busy with Retry-After, counts the refusal and returns ok false. The
// caller calls done once the socket has signed in or been refused (more
// calls are harmless).
func (a *Authenticator) PendingSocket(w http.ResponseWriter) (done func(), ok bool) {
	if a.pending.Add(1) > MaxPendingSockets {
		a.pending.Add(-1)
		a.pendingRefused.Add(1)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"busy","message":"Too many admin sockets are signing in on this server; try again in a moment."}`))
		return nil, false
	}
	var once sync.Once
	return func() { once.Do(func() { a.pending.Add(-1) }) }, true
}

// PendingRefused returns how many admin socket upgrades PendingSocket
// refused.
func (a *Authenticator) PendingRefused() uint64 { return a.pendingRefused.Load() }

// SocketRefusal is the close code and reason of an admin socket whose
// sign-in failed with err (from Authenticate or Principal).
func SocketRefusal(err error) *adminws.Refusal {
	var lim *Limited
	switch {
	case errors.As(err, &lim):
		return &adminws.Refusal{Code: adminws.CloseTooManyFailures,
			Reason: "too many failed sign-ins; retry in " + ratelimit.RetryAfter(lim.RetryAfter) + " s"}
	case errors.Is(err, ErrNoToken):
		return adminws.ErrNoToken
	case errors.Is(err, ErrBusy):
		return &adminws.Refusal{Code: websocket.CloseTryAgainLater, Reason: "service busy, try again"}
	}
	return &adminws.Refusal{Code: adminws.CloseUnauthorized, Reason: "invalid token"}
}
