package api

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

// A scheduled opening through the visitor API: a pre-queue with the
// opening time and nobody admitted, then the drawn order, the same on every
// front node and after a restart.
func TestScheduledOpeningThroughHTTP(t *testing.T) {
	clock := newStillClock()
	// Two members of one cluster, each a front: the room's grain lives on
	// one of them, the other answers from the views pushed to it. Under the
	// race detector one member only: protoactor's cluster code races with
	// itself when several members run in one process.
	var w, other *world
	if raceDetector {
		w = newWorld(t, memlog.New(), clock)
	} else {
		w, other = newPair(t, memlog.New(), clock)
	}
	opens := clock.Now().Add(time.Hour).UTC()
	st, m, _ := w.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{
		"slug": "opening", "name": "On-sale", "targetUrl": "https://shop.example.com/tickets",
		"domains": []string{"shop.example.com"}, "ratePerMinute": 600, "opensAt": opens.Format(time.RFC3339)})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, m)
	}

	const pre = 40
	tickets := make([]string, pre+1)
	for n := 1; n <= pre; n++ {
		st, j, _ := w.do("POST", "/queue/opening/join", "", nil)
		if st != 200 || j["number"] != float64(n) || j["admitted"] != false || j["ahead"] != 0.0 ||
			j["opensAt"] != opens.Format(time.RFC3339) || j["position"] != nil {
			t.Fatalf("join %d before the opening: %d %v", n, st, j)
		}
		tickets[n] = j["ticket"].(string)
	}
	clock.Advance(59 * time.Minute)
	for _, n := range []int{1, pre / 2, pre} {
		st, s, _ := w.do("GET", "/queue/opening/status?ticket="+tickets[n], "", nil)
		if st != 200 || s["admitted"] != false || s["opensAt"] != opens.Format(time.RFC3339) || s["position"] != nil ||
			s["active"] != true || s["estimatedWaitSeconds"] != 60.0 {
			t.Fatalf("status of %d a minute before the opening: %d %v", n, st, s)
		}
		if st, m, _ := w.do("POST", "/queue/opening/token", "", map[string]any{"ticket": tickets[n]}); st != 425 {
			t.Fatalf("token of %d before the opening: %d %v", n, st, m)
		}
	}
	if _, info, _ := w.do("GET", "/queue/opening/info", "", nil); info["serving"] != 0.0 || info["waiting"] != float64(pre) {
		t.Fatalf("info before the opening: %v", info)
	}
	if st, _, h := w.do("GET", "/queue/opening/enter", "", nil); st != 302 || h.Get("Location")[:len("http://queue.test/queue/opening?ticket=")] != "http://queue.test/queue/opening?ticket=" {
		t.Fatalf("gateway before the opening: %d %s, want the waiting room", st, h.Get("Location"))
	}
	tickets = append(tickets, "") // number pre+1 came through the gateway

	clock.Advance(time.Minute) // the opening: the grain draws on its next tick
	status := func(e *env, n int) map[string]any {
		t.Helper()
		st, s, _ := e.do("GET", "/queue/opening/status?ticket="+tickets[n], "", nil)
		if st != 200 {
			t.Fatalf("status of %d: %d %v", n, st, s)
		}
		return s
	}
	waitFor(t, 5*time.Second, "the draw", func() bool { return status(w.env, 1)["position"] != nil })
	positions := map[int]int{}
	taken := map[int]bool{}
	for n := 1; n <= pre; n++ {
		s := status(w.env, n)
		p, ok := s["position"].(float64)
		if !ok || p < 1 || p > pre+1 || taken[int(p)] {
			t.Fatalf("position of %d after the draw: %v (taken: %v)", n, s, taken)
		}
		positions[n], taken[int(p)] = int(p), true
		if s["opensAt"] != opens.Format(time.RFC3339) || s["admitted"] != false {
			t.Fatalf("status of %d at the opening: %v", n, s)
		}
	}
	inOrder := 0
	for n := 1; n <= pre; n++ {
		if positions[n] == n {
			inOrder++
		}
	}
	if inOrder > pre/4 {
		t.Fatalf("%d of %d numbers kept their arrival place: that is no draw", inOrder, pre)
	}

	// Ten a second, in drawn order.
	clock.Advance(time.Second)
	ctx := context.Background()
	for n := 1; n <= pre; n++ {
		s := status(w.env, n)
		if want := positions[n] <= 10; s["admitted"] != want || s["position"] != float64(positions[n]) {
			t.Fatalf("a second after the opening, number %d at position %d: %v, want admitted %v", n, positions[n], s, want)
		}
		st, _, _ := w.do("POST", "/queue/opening/token", "", map[string]any{"ticket": tickets[n]})
		if want := map[bool]int{true: 200, false: 425}[positions[n] <= 10]; st != want {
			t.Fatalf("token of %d at position %d: %d, want %d", n, positions[n], st, want)
		}
	}
	// Later joins queue behind the drawn group, in arrival order.
	st, j, _ := w.do("POST", "/queue/opening/join", "", nil)
	last := int(j["number"].(float64))
	if st != 200 || j["position"] != nil || j["admitted"] != false || j["ahead"] != float64(last-10-1) {
		t.Fatalf("join after the opening: %d %v", st, j)
	}
	tickets = append(tickets, j["ticket"].(string))

	// Every front computes the same from the view alone: a view fetched from
	// the grain gives the same status as this front's cached one, for every
	// number, and so does another member's view and its HTTP answers.
	mine, _, err := w.node.Views.BySlug(ctx, "opening")
	if err != nil {
		t.Fatal(err)
	}
	var fetched room.View
	if err := w.node.Client.Admin(ctx, mine.View.ID, protocol.OpGet, protocol.AdminRequest{Actor: "admin"}, &fetched); err != nil {
		t.Fatal(err)
	}
	now := clock.Now().UnixNano()
	for n := uint64(1); n <= uint64(last); n++ {
		if a, b := mine.View.StatusOf(n, now), fetched.StatusOf(n, now); !reflect.DeepEqual(a, b) {
			t.Fatalf("status of %d: %+v from the cached view, %+v from the grain's", n, a, b)
		}
	}
	if other != nil {
		waitFor(t, 10*time.Second, "the second front's view", func() bool {
			r, ok, err := other.node.Views.BySlug(ctx, "opening")
			return err == nil && ok && r.View.Issued == mine.View.Issued && r.View.Version >= mine.View.Version && len(r.View.Draws) == 1
		})
		theirs, _, _ := other.node.Views.BySlug(ctx, "opening")
		for n := uint64(1); n <= uint64(last); n++ {
			if a, b := mine.View.StatusOf(n, now), theirs.View.StatusOf(n, now); !reflect.DeepEqual(a, b) {
				t.Fatalf("status of %d: %+v on one front, %+v on the other", n, a, b)
			}
		}
		for n := 1; n <= pre; n++ {
			if a, b := status(w.env, n), status(other.env, n); !reflect.DeepEqual(a, b) {
				t.Fatalf("status of %d over HTTP: %v on one front, %v on the other", n, a, b)
			}
		}
	}

	// A restart after the draw keeps every position: every member goes, one
	// comes back alone.
	if other != nil {
		other.stop()
		// The survivor notices, before it stops too.
		waitFor(t, 10*time.Second, "the survivor seeing itself alone", func() bool { return len(w.node.Members()) == 1 })
	}
	w.restart(t, true)
	for n := 1; n <= pre; n++ {
		if s := status(w.env, n); s["position"] != float64(positions[n]) || s["admitted"] != (positions[n] <= 10) {
			t.Fatalf("after restart, number %d: %v, want position %d", n, s, positions[n])
		}
	}
	if st, j, _ := w.do("POST", "/queue/opening/join", "", nil); st != 200 || j["position"] != nil || j["number"].(float64) <= float64(last) {
		t.Fatalf("join after the restart: %d %v", st, j)
	}
}
