package api

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon"
	"github.com/aditus-queue/aditus-queue/actors/beacon/beacontest"
	"github.com/aditus-queue/aditus-queue/actors/drawcheck"
	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// quicknetAt is a stillClock in the past of a recorded quicknet round: the
// grain decides in that time, while the beacon's round is already
// published (served by beacontest).
func quicknetAt(t *testing.T) (*stillClock, *beacon.Client, *beacontest.Server, beacon.Round) {
	srv := beacontest.Start(t)
	q := beacontest.Chains()[1]
	cl, err := beacon.Open(context.Background(), srv.ChainURL(q.Info.Hash))
	if err != nil {
		t.Fatal(err)
	}
	round := q.Rounds[0]
	clock := &stillClock{}
	// Ten minutes before the round is published.
	clock.ns.Store(cl.Chain().RoundTime(round.Round).Add(-10 * time.Minute).UnixNano())
	return clock, cl, srv, round
}

func reveal(t *testing.T, e *env, slug string) (int, room.Reveal) {
	t.Helper()
	st, _, raw := e.raw("GET", "/queue/"+slug+"/draw", nil)
	var rev room.Reveal
	if st == http.StatusOK {
		if err := json.Unmarshal(raw, &rev); err != nil {
			t.Fatal(err)
		}
	}
	return st, rev
}

// drawInfoOf returns the draw's state and commitment in /info ("", nil:
// none).
func drawInfoOf(t *testing.T, e *env, slug string) (string, *room.PublicCommitment) {
	t.Helper()
	st, _, raw := e.raw("GET", "/queue/"+slug+"/info", nil)
	var info struct {
		Draw *struct {
			State string `json:"state"`
			room.PublicCommitment
		} `json:"draw"`
	}
	if st != http.StatusOK || json.Unmarshal(raw, &info) != nil {
		t.Fatalf("info: %d %s", st, raw)
	}
	if info.Draw == nil {
		return "", nil
	}
	return info.Draw.State, &info.Draw.PublicCommitment
}

// A scheduled opening with a beacon, end to end: the commitment in /info
// while the pre-queue is open, kept in substance when the opening moves,
// the draw made with the committed key and the recorded real quicknet
// round, the reveal at /draw, and every position /status gives recomputed
// from the reveal alone.
func TestCommittedDrawThroughHTTP(t *testing.T) {
	clock, cl, _, round := quicknetAt(t)
	e := newEnvWith(t, func(d *grain.Deps, c *Config) {
		d.Now, c.Now, d.Beacon = clock.Now, clock.Now, cl
	})
	roundTime := cl.Chain().RoundTime(round.Round)
	opens := roundTime.Add(-4 * time.Second) // round-1 is due 1 s later: too early
	st, m, _ := e.do("POST", "/api/admin/queue/sites", adminTok, map[string]any{
		"slug": "drawn", "name": "Drawn sale", "targetUrl": "https://shop.example.com/", "domains": []string{"shop.example.com"},
		"ratePerMinute": 60, "opensAt": opens.Format(time.RFC3339)})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, m)
	}
	id := m["site"].(map[string]any)["id"].(string)
	state, first := drawInfoOf(t, e, "drawn")
	if first == nil || state != "sealed" || first.Beacon == nil || first.Beacon.Round != round.Round-1 {
		t.Fatalf("commitment before the move: %+v", first)
	}
	if st, _ := reveal(t, e, "drawn"); st != http.StatusTooEarly {
		t.Fatalf("reveal while sealed: %d, want 425", st)
	}
	e.patchSite(id, func(s map[string]any) { s["opensAt"] = roundTime.Add(-time.Second).Format(time.RFC3339) })
	_, moved := drawInfoOf(t, e, "drawn")
	if moved.Hash == first.Hash || moved.KeyHash != first.KeyHash || moved.Beacon.Round != round.Round ||
		len(moved.Previous) != 1 || moved.Previous[0] != first.Hash {
		t.Fatalf("commitment after the move: %+v, first %+v", moved, first)
	}
	const pre = 25
	tickets := make([]string, pre+1)
	for n := 1; n <= pre; n++ {
		st, j, _ := e.do("POST", "/queue/drawn/join", "", nil)
		if st != 200 || j["number"] != float64(n) {
			t.Fatalf("join %d: %d %v", n, st, j)
		}
		tickets[n] = j["ticket"].(string)
	}
	// Just past the opening, before the round's time: the grain closes the
	// pre-queue, then reads the round (recorded, so already served).
	clock.Advance(10*time.Minute - 900*time.Millisecond)
	waitFor(t, 10*time.Second, "the draw", func() bool {
		state, _ := drawInfoOf(t, e, "drawn")
		return state == "drawn"
	})
	st, rev := reveal(t, e, "drawn")
	if st != http.StatusOK || rev.Beacon == nil || rev.Beacon.Round != round.Round || rev.Beacon.Randomness != round.Randomness ||
		rev.From != 0 || rev.To != pre || rev.Commitment.Hash != moved.Hash {
		t.Fatalf("reveal: %d %+v", st, rev)
	}
	rep, d := drawcheck.Check(&rev, first)
	if !rep.OK() || d == nil {
		t.Fatalf("the Go verifier refuses a real draw: %+v", rep)
	}
	if err := d.Bijection(); err != nil {
		t.Fatal(err)
	}
	// The verifier of `aditus-queue draw verify`, over HTTP, on this run.
	full, err := drawcheck.Verify(context.Background(), e.srv.URL+"/queue/drawn", drawcheck.Options{Number: 7, Ticket: tickets[7], Commitment: first.Hash})
	if err != nil || !full.OK() {
		t.Fatalf("draw verify on a real run: %v %+v", err, full)
	}
	jsAgrees(t, rev, first.Hash, 7, d)
	for n := 1; n <= pre; n++ {
		_, s, _ := e.do("GET", "/queue/drawn/status?ticket="+tickets[n], "", nil)
		p, err := d.Position(uint64(n))
		if err != nil || s["position"] != float64(p) {
			t.Fatalf("number %d: status says %v, the reveal gives %d (%v)", n, s["position"], p, err)
		}
	}

	// Armed again: a new key and commitment in /info; the draw made stays
	// revealed and verifiable.
	e.patchSite(id, func(s map[string]any) { s["opensAt"] = clock.Now().Add(time.Hour).UTC().Format(time.RFC3339) })
	state, next := drawInfoOf(t, e, "drawn")
	if state != "sealed" || next.KeyHash == moved.KeyHash || next.Hash == moved.Hash || len(next.Previous) != 0 {
		t.Fatalf("re-armed: %s %+v", state, next)
	}
	if st, again := reveal(t, e, "drawn"); st != http.StatusOK || again.Key != rev.Key {
		t.Fatalf("reveal after re-arming: %d %+v", st, again)
	}
	if rep, err := drawcheck.Verify(context.Background(), e.srv.URL+"/queue/drawn", drawcheck.Options{Commitment: moved.Hash}); err != nil || !rep.OK() {
		t.Fatalf("draw verify after re-arming: %v %+v", err, rep)
	}
}

// jsAgrees runs the page's verifier (transport/web/static/drawcheck.js)
// under node on this real reveal: it recomputes number n's position as the
// Go verifier does, and fails, as the Go verifier does, when the key, the
// beacon value or the range is changed.
func jsAgrees(t *testing.T, rev room.Reveal, noted string, n uint64, d *drawcheck.Draw) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	want, _ := d.Position(n)
	module := filepath.Join(t.TempDir(), "drawcheck.mjs")
	src, err := os.ReadFile(filepath.Join("..", "web", "static", "drawcheck.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(module, src, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(rev room.Reveal, n, told uint64) (bool, string) {
		t.Helper()
		in := filepath.Join(t.TempDir(), "input.json")
		b, _ := json.Marshal(map[string]any{"reveal": rev, "noted": noted, "number": n, "told": told})
		if err := os.WriteFile(in, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(node, filepath.Join("..", "web", "testdata", "drawcheck.mjs"), module, in).Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		var res struct {
			OK       bool    `json:"ok"`
			Position *string `json:"position"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		p := ""
		if res.Position != nil {
			p = *res.Position
		}
		return res.OK, p
	}
	if ok, p := run(rev, n, want); !ok || p != strconv.FormatUint(want, 10) {
		t.Fatalf("JS verifier on the real reveal: ok %v position %s, Go %d", ok, p, want)
	}
	flip := func(s string) string {
		return strings.Replace(s, s[:1], map[bool]string{true: "1", false: "0"}[s[0] == '0'], 1)
	}
	for name, tamper := range map[string]func(*room.Reveal){
		"key":        func(r *room.Reveal) { r.Key = flip(r.Key) },
		"randomness": func(r *room.Reveal) { b := *r.Beacon; b.Randomness = flip(b.Randomness); r.Beacon = &b },
		"range":      func(r *room.Reveal) { r.To++; r.Size++ },
		"closing":    func(r *room.Reveal) { r.ClosedAtMs += 5000 },
	} {
		bad := rev
		tamper(&bad)
		m := n
		rep, badDraw := drawcheck.Check(&bad, nil)
		if name == "range" {
			// Nothing but the positions given out binds the range: a changed
			// range is caught by a number it moves (a given number keeps its
			// place by chance about once in size draws), so ask for one.
			m = movedNumber(t, d, badDraw, rev.To)
		}
		told, _ := d.Position(m)
		if ok, _ := run(bad, m, told); ok {
			t.Errorf("JS verifier passes a reveal with a changed %s (number %d)", name, m)
		}
		if rep.OK() && name != "range" {
			t.Errorf("Go verifier passes a reveal with a changed %s", name)
		}
	}
}

// movedNumber is the first number in 1…to whose position differs between
// the real draw and a changed one.
func movedNumber(t *testing.T, real, changed *drawcheck.Draw, to uint64) uint64 {
	t.Helper()
	if changed == nil {
		t.Fatal("the Go verifier gives no draw for a changed range")
	}
	for m := uint64(1); m <= to; m++ {
		a, errA := real.Position(m)
		b, errB := changed.Position(m)
		if errA != nil || errB != nil {
			t.Fatalf("position of %d: %v %v", m, errA, errB)
		}
		if a != b {
			return m
		}
	}
	t.Fatalf("a changed range moves none of %d numbers", to)
	return 0
}
