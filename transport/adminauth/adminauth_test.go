package adminauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// The directory here is a fake for speed: the admin API, dashboard and
// load-test tests run the authenticator against real nodes.
type fakeDirectory struct {
	rooms []string
	keys  map[string]string // key hash → room
	lists atomic.Int32
	auths atomic.Int32
}

func (d *fakeDirectory) List(context.Context) ([]protocol.DirectoryEntry, error) {
	d.lists.Add(1)
	var out []protocol.DirectoryEntry
	for _, id := range d.rooms {
		out = append(out, protocol.DirectoryEntry{ID: id, Slug: id})
	}
	return out, nil
}

func (d *fakeDirectory) Admin(_ context.Context, id, op string, req protocol.AdminRequest, _ any) error {
	d.auths.Add(1)
	if op != protocol.OpAuthKey || d.keys[string(req.KeyHash)] != id {
		return &protocol.Error{Code: protocol.CodeUnauthorized, Message: "no"}
	}
	return nil
}

func hash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

const (
	operator = "the-operator-token-of-24-chars"
	roomKey  = "qak_r1_secretpart"
)

type testClock struct{ t time.Time }

func (c *testClock) now() time.Time { return c.t }

func newTest(t *testing.T) (*Authenticator, *fakeDirectory, *testClock) {
	t.Helper()
	dir := &fakeDirectory{rooms: []string{"r1", "r2"}, keys: map[string]string{string(hash(roomKey)): "r1"}}
	clock := &testClock{t: time.Unix(1_800_000_000, 0)}
	trusted, _ := clientaddr.ParsePrefixes([]string{"127.0.0.1/32"})
	a, err := New(Config{Directory: dir, AdminHash: hash(operator), Hash: hash, Clients: clientaddr.NewResolver(trusted), Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	return a, dir, clock
}

// from is a request from client address ip, through the trusted proxy.
func from(ip string) *http.Request {
	r := httptest.NewRequest("GET", "/api/admin/queue/sites", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	r.Header.Set("X-Forwarded-For", ip)
	return r
}

func TestPrincipals(t *testing.T) {
	a, _, _ := newTest(t)
	ctx := context.Background()
	if p, err := a.Authenticate(ctx, from("192.0.2.1"), operator); err != nil || !p.Operator {
		t.Fatalf("operator: %+v %v", p, err)
	}
	if p, err := a.Authenticate(ctx, from("192.0.2.1"), roomKey); err != nil || p.Operator || p.RoomID != "r1" || string(p.KeyHash) != string(hash(roomKey)) {
		t.Fatalf("key: %+v %v", p, err)
	}
	for _, tok := range []string{"qak_r1_wrong", "qak_r9_x", "qak_", "nonsense", operator + "x"} {
		if _, err := a.Authenticate(ctx, from("192.0.2.1"), tok); !errors.Is(err, ErrBadToken) {
			t.Errorf("%q: %v, want ErrBadToken", tok, err)
		}
	}
	if _, err := a.Authenticate(ctx, from("192.0.2.1"), ""); !errors.Is(err, ErrNoToken) {
		t.Errorf("no token: %v", err)
	}
	if _, err := New(Config{Hash: hash}); err == nil {
		t.Error("New without a directory accepted")
	}
}

// Ten failures from one address, then 429 with the time to wait, for
// every credential; other addresses and missing tokens are not counted;
// a refill lets one more attempt through.
func TestFailuresLimitedPerAddress(t *testing.T) {
	a, _, clock := newTest(t)
	ctx := context.Background()
	for i := range FailureBurst {
		if _, err := a.Authenticate(ctx, from("203.0.113.9"), ""); !errors.Is(err, ErrNoToken) {
			t.Fatalf("missing token: %v", err)
		}
		if _, err := a.Authenticate(ctx, from("203.0.113.9"), "guess"); !errors.Is(err, ErrBadToken) {
			t.Fatalf("failure %d: %v, want ErrBadToken", i+1, err)
		}
	}
	var lim *Limited
	if _, err := a.Authenticate(ctx, from("203.0.113.9"), "guess"); !errors.As(err, &lim) || lim.RetryAfter <= 0 || lim.RetryAfter > 6*time.Second {
		t.Fatalf("failure %d: %v, want Limited with a wait of at most 6 s", FailureBurst+1, err)
	}
	if _, err := a.Authenticate(ctx, from("203.0.113.9"), operator); !errors.As(err, &lim) {
		t.Fatalf("the operator's token from the limited address: %v, want Limited", err)
	}
	if a.Limited(from("203.0.113.9")) <= 0 || a.Limited(from("198.51.100.4")) != 0 {
		t.Fatal("Limited does not tell the limited address from another")
	}
	if p, err := a.Authenticate(ctx, from("198.51.100.4"), operator); err != nil || !p.Operator {
		t.Fatalf("the operator from another address: %+v %v", p, err)
	}
	if _, err := a.Authenticate(ctx, from("198.51.100.4"), "guess"); !errors.Is(err, ErrBadToken) {
		t.Fatalf("another address's first failure: %v", err)
	}
	// An address of the same IPv6 /64 is the same client.
	for range FailureBurst {
		_, _ = a.Authenticate(ctx, from("2001:db8::1"), "guess")
	}
	if _, err := a.Authenticate(ctx, from("2001:db8::ffff"), "guess"); !errors.As(err, &lim) {
		t.Fatalf("same /64: %v, want Limited", err)
	}
	clock.t = clock.t.Add(time.Minute / FailuresPerMinute)
	if _, err := a.Authenticate(ctx, from("203.0.113.9"), "guess"); !errors.Is(err, ErrBadToken) {
		t.Fatalf("after a refill: %v, want one more attempt", err)
	}
	if _, err := a.Authenticate(ctx, from("203.0.113.9"), "guess"); !errors.As(err, &lim) {
		t.Fatalf("after the refill's attempt: %v, want Limited", err)
	}
}

// Successes spend nothing: the operator signs in as often as it likes.
func TestSuccessesAreNotCounted(t *testing.T) {
	a, _, _ := newTest(t)
	for i := range 10 * FailureBurst {
		if _, err := a.Authenticate(context.Background(), from("192.0.2.8"), operator); err != nil {
			t.Fatalf("sign-in %d: %v", i+1, err)
		}
	}
}

// One cache: a key is checked with its grain once per few seconds, and the
// room list fetched once, however many requests and sockets ask.
func TestKeyChecksAreCached(t *testing.T) {
	a, dir, clock := newTest(t)
	for range 20 {
		if _, err := a.Principal(context.Background(), roomKey); err != nil {
			t.Fatal(err)
		}
	}
	if dir.auths.Load() != 1 || dir.lists.Load() != 1 {
		t.Fatalf("%d key checks and %d lists for 20 sign-ins, want 1 and 1", dir.auths.Load(), dir.lists.Load())
	}
	clock.t = clock.t.Add(cacheTTL)
	if _, err := a.Principal(context.Background(), roomKey); err != nil || dir.auths.Load() != 2 {
		t.Fatalf("after the cache's life: %v, %d checks, want 2", err, dir.auths.Load())
	}
	a.RoomsChanged("r1")
	if ok, _ := a.KnownRoom(context.Background(), "r9"); ok {
		t.Fatal("an unknown room is known")
	}
	dir.rooms = append(dir.rooms, "r9")
	if ok, _ := a.KnownRoom(context.Background(), "r9"); ok {
		t.Fatal("KnownRoom fetched again within the cache's life")
	}
	if ok, _ := a.RoomExists(context.Background(), "r9"); !ok {
		t.Fatal("RoomExists did not look in a fresh list")
	}
}

func TestSocketRefusal(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{&Limited{RetryAfter: 1500 * time.Millisecond}, adminws.CloseTooManyFailures},
		{ErrNoToken, adminws.CloseUnauthorized},
		{ErrBadToken, adminws.CloseUnauthorized},
		{ErrBusy, 1013},
	} {
		if got := SocketRefusal(tc.err); got.Code != tc.code {
			t.Errorf("%v: close %d, want %d", tc.err, got.Code, tc.code)
		}
	}
	lim := SocketRefusal(&Limited{RetryAfter: 1500 * time.Millisecond})
	if !strings.Contains(lim.Reason, "retry in 2 s") {
		t.Errorf("got %q, want the wait rounded up to 2 s", lim.Reason)
	}
}
