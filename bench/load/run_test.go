package load

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/internal/fakequeue"
	"github.com/aditus-queue/aditus-queue/bench/target"
)

// newRoom starts the contract fake and creates a test room on it.
func newRoom(t *testing.T) (*fakequeue.Server, *target.Room, *Target) {
	t.Helper()
	srv := fakequeue.New("tok")
	t.Cleanup(srv.Close)
	base, err := target.Check(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := NewClient(64, 10*time.Second)
	room, err := target.NewAdmin(base, "tok", client).CreateRoom(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	return srv, room, NewTarget(client, base, room.Slug)
}

// The figures asserted below are counts, which the schedule and the caps
// fix; no wall-clock figure is asserted.
func TestRunAgainstFake(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cfg          Config
		wantRequests int64
		wantJoins    int
		wantStatuses int
	}{
		{"join open loop", Config{Profile: ProfileJoin, Rate: 200, Duration: 250 * time.Millisecond}, 50, 50, 0},
		// The connections are opened by statuses without a ticket, which
		// the fake refuses (and does not count): no join is made for them.
		{"join open loop over 4 connections", Config{Profile: ProfileJoin, Rate: 200, Connections: 4, Duration: 250 * time.Millisecond}, 50, 50, 0},
		{"status closed loop", Config{Profile: ProfileStatus, Connections: 4, Duration: time.Minute, MaxRequests: 200}, 200, DefaultTickets, 200},
		{"mix open loop", Config{Profile: ProfileMix, Rate: 400, Duration: 250 * time.Millisecond, Mix: DefaultMix}, 100, DefaultTickets + 10, 90},
		{"mix 1:1 closed loop", Config{Profile: ProfileMix, Connections: 2, Duration: time.Minute, MaxRequests: 40, Mix: Mix{1, 1}}, 40, DefaultTickets + 20, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, tgt := newRoom(t)
			cfg := tc.cfg
			if cfg.MaxRequests == 0 {
				cfg.MaxRequests = DefaultMaxRequests
			}
			cfg.MaxInFlight = DefaultMaxInFlight
			res, err := Run(context.Background(), tgt, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tc.wantRequests || res.OK != tc.wantRequests {
				t.Errorf("got %d requests, %d ok (errors %v), want %d", res.Requests, res.OK, res.Errors, tc.wantRequests)
			}
			if got := res.Latency.Count(); got != uint64(tc.wantRequests) {
				t.Errorf("latencies: got %d, want %d", got, tc.wantRequests)
			}
			joins, statuses, _ := srv.Counts()
			if joins != tc.wantJoins || statuses != tc.wantStatuses {
				t.Errorf("server saw %d joins, %d statuses, want %d, %d", joins, statuses, tc.wantJoins, tc.wantStatuses)
			}
		})
	}
}

func TestRunCountsErrors(t *testing.T) {
	_, room, tgt := newRoom(t)
	if err := room.Delete(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), tgt, Config{Profile: ProfileJoin, Connections: 1, Duration: time.Minute, MaxRequests: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors[Class4xx] != 5 || res.OK != 0 {
		t.Errorf("joins to a deleted room: got %v errors, %d ok, want 4xx=5", res.Errors, res.OK)
	}
	if _, err := Run(context.Background(), tgt, Config{Profile: ProfileStatus, Connections: 1, Duration: time.Minute, MaxRequests: 5}); err == nil {
		t.Errorf("status run without a room to draw tickets from: got no error")
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Profile: ProfileJoin, Rate: 10, Duration: time.Second, MaxRequests: 10, MaxInFlight: 10}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
	}{
		{"too many connections", func(c *Config) { c.Connections = MaxConnections + 1 }},
		{"neither", func(c *Config) { c.Rate = 0 }},
		{"too long", func(c *Config) { c.Duration = MaxDuration + time.Second }},
		{"no duration", func(c *Config) { c.Duration = 0 }},
		{"too many requests", func(c *Config) { c.MaxRequests = MaxRequestsCap + 1 }},
		{"no request cap", func(c *Config) { c.MaxRequests = 0 }},
		{"rate too high", func(c *Config) { c.Rate = MaxRate + 1 }},
		{"unknown profile", func(c *Config) { c.Profile = "flood" }},
		{"ws", func(c *Config) { c.Profile = ProfileWS }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			if err := c.Validate(); err == nil {
				t.Errorf("got no error")
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestPushAgainstFake(t *testing.T) {
	srv, room, tgt := newRoom(t)
	ctx := context.Background()
	tickets, err := tgt.JoinMany(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	var rounds []Round
	res, err := Push(ctx, tgt, tickets, room, PushConfig{
		Sockets: 20, Changes: 3, BaseRate: 60, Duration: time.Minute, Wait: 10 * time.Second,
		OnRound: func(r Round) { rounds = append(rounds, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 60 || res.OK != 60 || len(res.Errors) != 0 {
		t.Errorf("got %d frames expected, %d received, errors %v; want 60, 60, none", res.Requests, res.OK, res.Errors)
	}
	if len(rounds) != 3 || len(res.Rounds) != 3 {
		t.Fatalf("rounds: got %d reported, %d in result, want 3", len(rounds), len(res.Rounds))
	}
	for i, r := range rounds {
		if r.Rate != 61+i || r.Received != 20 || r.Missing != 0 {
			t.Errorf("round %d: got rate %d, received %d, missing %d; want %d, 20, 0", i+1, r.Rate, r.Received, r.Missing, 61+i)
		}
		if r.TimeToAll < r.P99 {
			t.Errorf("round %d: time to all %v below p99 %v", i+1, r.TimeToAll, r.P99)
		}
	}
	if _, _, patches := srv.Counts(); patches != 3 {
		t.Errorf("patches: got %d, want 3", patches)
	}
}

// A socket whose room never changes (the change goes elsewhere) must count
// as missing, not hang.
func TestPushMissingFrames(t *testing.T) {
	_, _, tgt := newRoom(t)
	_, other, _ := newRoom(t)
	ctx := context.Background()
	tickets, err := tgt.JoinMany(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Push(ctx, tgt, tickets, other, PushConfig{Sockets: 3, Changes: 1, BaseRate: 60, Duration: time.Minute, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors[ClassNoFrame] != 3 || res.OK != 0 || res.TimeToAll != 0 {
		t.Errorf("got %v errors, %d ok, time to all %v; want no_frame=3, 0, 0", res.Errors, res.OK, res.TimeToAll)
	}
}

func TestPushNoSocketOpens(t *testing.T) {
	_, room, tgt := newRoom(t)
	res, err := Push(context.Background(), tgt, []string{"forged", "forged"}, room, PushConfig{Sockets: 2, Changes: 1, BaseRate: 60, Duration: time.Minute, Wait: time.Second})
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("got %v, want an error naming the HTTP 404 of the handshake", err)
	}
	if res.Errors[ClassDial] != 2 {
		t.Errorf("got errors %v, want dial=2", res.Errors)
	}
}
