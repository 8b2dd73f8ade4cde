package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/filelog"
	"github.com/aditus-queue/aditus-queue/transport/api/apitest"
)

// The capacity endpoints: the operator reads and changes a room a proxy
// served; a rate room's key is refused everywhere; bad values are 400
// naming the field, a stale version 409, and a flood of changes stops at
// 30 a minute with 429 and Retry-After, with nothing more in the log.
func TestCapacityAdjustAbuse(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	id := protocol.CapacityID("shop.example.com", "/")
	set := capacity.Settings{Active: 10, Session: time.Minute, Refresh: 10 * time.Second}
	if _, err := s.Node.Client.CapacityTouch(context.Background(), id, protocol.CapacityTouch{Settings: set, Host: "shop.example.com", Name: "/"}); err != nil {
		t.Fatal(err)
	}
	announce(t, s, "shop.example.com")
	room := "/api/admin/queue/capacity/" + id
	key := s.CreateKey(s.CreateRoom("other", 1))
	for _, c := range []struct{ method, path string }{{"GET", "/api/admin/queue/capacity"}, {"GET", room}, {"PATCH", room}} {
		if st, _ := s.Call(c.method, c.path, key, map[string]any{"version": 0, "active": 99}); st != http.StatusForbidden {
			t.Fatalf("%s %s with a rate room's key: %d, want 403", c.method, c.path, st)
		}
	}
	if st, m := s.Call("PATCH", room, apitest.AdminToken, map[string]any{"version": 0, "active": 0}); st != 400 || m["field"] != "active" {
		t.Fatalf("active 0: %d %v, want 400 naming active", st, m)
	}
	if st, m := s.Call("PATCH", room, apitest.AdminToken, map[string]any{"version": 0, "pow": map[string]any{"perMinute": 10, "bits": 30}}); st != 400 || m["field"] != "pow" {
		t.Fatalf("pow bits 30: %d %v, want 400 naming pow", st, m)
	}
	if st, _ := s.Call("PATCH", "/api/admin/queue/capacity/"+protocol.CapacityID("nobody.example.com", "/"), apitest.AdminToken, map[string]any{"active": 3}); st != 404 {
		t.Fatalf("a room no proxy served: %d, want 404", st)
	}
	for v := range capacity.MaxAdjustments {
		if st, m := s.Call("PATCH", room, apitest.AdminToken, map[string]any{"version": v, "active": 11 + v}); st != 200 {
			t.Fatalf("change %d: %d %v", v+1, st, m)
		}
	}
	if st, _ := s.Call("PATCH", room, apitest.AdminToken, map[string]any{"version": 0, "active": 5}); st != 409 {
		t.Fatalf("a stale version: %d, want 409", st)
	}
	req, _ := http.NewRequest("PATCH", s.URL+room, strings.NewReader(`{"active":99}`))
	req.Header.Set("Authorization", "Bearer "+apitest.AdminToken)
	req.Header.Set("If-Match", fmt.Sprintf(`"%d"`, capacity.MaxAdjustments))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" {
		t.Fatalf("change %d within a minute: %d Retry-After %q, want 429 and 60", capacity.MaxAdjustments+1, res.StatusCode, res.Header.Get("Retry-After"))
	}
	got, err := s.Node.Client.CapacityState(context.Background(), id)
	if err != nil || got.Runtime.Version != capacity.MaxAdjustments || got.Settings.Active != 10+capacity.MaxAdjustments {
		t.Fatalf("after the flood: version %d active %d %v", got.Runtime.Version, got.Settings.Active, err)
	}
}

// announce announces the room "/" of host, as a proxy node does.
func announce(t *testing.T, s *apitest.Server, host string) {
	t.Helper()
	r := protocol.CapacityRoom{ID: protocol.CapacityID(host, "/"), Host: host, Name: "/"}
	if err := s.Node.Client.CapacityAnnounce(context.Background(), []protocol.CapacityRoom{r}); err != nil {
		t.Fatal(err)
	}
}

// TestCapacityUnknownIDWritesNothing: a well-formed id that no proxy node
// announces is 404 on reading and on changing, and neither activates its
// grain: its stream holds no record and no snapshot afterwards. A room
// whose grain ran but that no node announces any more (a restore from a
// backup older than the file) is 404 too, its log kept as it was.
func TestCapacityUnknownIDWritesNothing(t *testing.T) {
	l, err := filelog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	s := apitest.Start(t, apitest.Options{Log: l})
	announce(t, s, "shop.example.com")
	ctx := context.Background()
	written := func(id string) int {
		n := 0
		if _, err := l.Replay(ctx, id, -1, func(persistence.Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := l.LoadSnapshot(ctx, id); err != nil || ok {
			n++
		}
		return n
	}
	for _, host := range []string{"nobody.example.com", "shop.example.com"} {
		id := protocol.CapacityID(host, "nobody")
		if st, m := s.Call("GET", "/api/admin/queue/capacity/"+id, apitest.AdminToken, nil); st != 404 || m["error"] != "not_found" {
			t.Fatalf("GET of %s: %d %v, want 404", id, st, m)
		}
		if st, _ := s.Call("PATCH", "/api/admin/queue/capacity/"+id, apitest.AdminToken, map[string]any{"version": 0, "active": 3}); st != 404 {
			t.Fatalf("PATCH of %s: %d, want 404", id, st)
		}
		if n := written(id); n != 0 {
			t.Fatalf("%d records and snapshots written for %s, want none", n, id)
		}
	}
	// A room that ran, then no node announced: its grain is not asked.
	gone := protocol.CapacityID("gone.example.com", "/")
	set := capacity.Settings{Active: 10, Session: time.Minute, Refresh: 10 * time.Second}
	if _, err := s.Node.Client.CapacityTouch(ctx, gone, protocol.CapacityTouch{Settings: set, Host: "gone.example.com", Name: "/"}); err != nil {
		t.Fatal(err)
	}
	before := written(gone)
	if st, _ := s.Call("PATCH", "/api/admin/queue/capacity/"+gone, apitest.AdminToken, map[string]any{"version": 0, "active": 3}); st != 404 {
		t.Fatalf("PATCH of an unannounced room: %d, want 404", st)
	}
	if after := written(gone); after != before {
		t.Fatalf("the unannounced room's stream went from %d to %d records", before, after)
	}
	announce(t, s, "gone.example.com")
	if st, m := s.Call("GET", "/api/admin/queue/capacity/"+gone, apitest.AdminToken, nil); st != 200 || m["host"] != "gone.example.com" {
		t.Fatalf("GET once announced: %d %v", st, m)
	}
}
