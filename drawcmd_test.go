package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon/beacontest"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// genuineDraw makes a committed draw of 30 numbers through the room's rules
// with a fixed key and the recorded quicknet round, as a node would.
func genuineDraw(t *testing.T) *room.Draw {
	t.Helper()
	q := beacontest.Chains()[1]
	chain, err := q.Info.Chain()
	if err != nil {
		t.Fatal(err)
	}
	round, err := q.Rounds[0].Decode()
	if err != nil {
		t.Fatal(err)
	}
	due := chain.RoundTime(round.Round)
	opens := due.Add(-time.Second).UTC()
	cfg := room.Config{Slug: "sale", Name: "Sale", RatePerMinute: 60, Active: true, OpensAt: &opens}
	key := bytes.Repeat([]byte{7}, room.DrawKeySize)
	st := room.New("r")
	apply := func(evs []room.Event, err error) {
		t.Helper()
		if err != nil || len(evs) == 0 {
			t.Fatalf("got %d events, %v", len(evs), err)
		}
		for _, e := range evs {
			st.Apply(0, e)
		}
	}
	apply(st.DecideCreate(cfg, nil, nil, due.Add(-10*time.Minute).UnixNano(), "admin", room.DrawKey{Key: key, Sealed: []byte("sealed"), Chain: chain}))
	st.Issued = 30
	apply(st.DecideClose(opens.UnixNano()), nil)
	apply(st.DecideDraw(due.UnixNano(), room.DrawInput{Key: key, Beacon: &round}))
	return &st.Draws[0]
}

// serveDraw serves d's /info, a (possibly tampered) reveal at /draw, and
// d's true positions at /status?number=N.
func serveDraw(t *testing.T, d *room.Draw, tamper func(*room.Reveal)) string {
	rev, _ := d.Reveal()
	tamper(&rev)
	mux := http.NewServeMux()
	mux.HandleFunc("/queue/sale/info", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"queue": "sale", "draw": struct {
			State string `json:"state"`
			room.PublicCommitment
		}{"drawn", d.Commit.Public()}})
	})
	mux.HandleFunc("/queue/sale/draw", func(w http.ResponseWriter, r *http.Request) { _ = json.NewEncoder(w).Encode(rev) })
	mux.HandleFunc("/queue/sale/status", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.ParseUint(r.URL.Query().Get("number"), 10, 64)
		_ = json.NewEncoder(w).Encode(map[string]any{"number": n, "position": d.Position(n)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/queue/sale"
}

func flipHex(s string, i int) string {
	b, _ := hex.DecodeString(s)
	b[i] ^= 1
	return hex.EncodeToString(b)
}

// draw verify passes a genuine draw and fails one whose key, beacon value
// or range was changed, or whose commitment is not the one noted.
func TestDrawVerifyCommand(t *testing.T) {
	d := genuineDraw(t)
	run := func(url string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runDraw(context.Background(), append([]string{"verify", url}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run(serveDraw(t, d, func(*room.Reveal) {}), "--number", "7"); code != 0 || !strings.Contains(out, "the draw verifies") {
		t.Fatalf("genuine draw: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		name   string
		tamper func(*room.Reveal)
		args   []string
		fails  string
	}{
		{"key", func(r *room.Reveal) { r.Key = flipHex(r.Key, 0) }, nil, "key"},
		{"key and its seed", func(r *room.Reveal) { r.Key, r.Seed = flipHex(r.Key, 3), flipHex(r.Seed, 3) }, nil, "key"},
		{"beacon randomness", func(r *room.Reveal) { r.Beacon.Randomness = flipHex(r.Beacon.Randomness, 1) }, nil, "signature"},
		{"beacon signature", func(r *room.Reveal) { r.Beacon.Signature = flipHex(r.Beacon.Signature, 40) }, nil, "signature"},
		{"beacon round", func(r *room.Reveal) { r.Beacon.Round++ }, nil, "beacon"},
		{"beacon dropped", func(r *room.Reveal) { r.Beacon, r.BeaconMissing = nil, "" }, nil, "beacon"},
		{"range grown", func(r *room.Reveal) { r.To++; r.Size++ }, []string{"--number", "7"}, "position"},
		{"range shifted", func(r *room.Reveal) { r.From++; r.To++ }, []string{"--number", "9"}, "position"},
		{"range inconsistent", func(r *room.Reveal) { r.Size++ }, nil, "range"},
		{"closing time", func(r *room.Reveal) { r.Commitment.ClosesAtMs++ }, nil, "commitment"},
		{"closed after the round", func(r *room.Reveal) { r.ClosedAtMs += 2000 }, nil, "timing"},
		{"another commitment noted", func(*room.Reveal) {}, []string{"--commitment", strings.Repeat("ab", 32)}, "published"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := run(serveDraw(t, d, tc.tamper), tc.args...)
			if code != 1 || !strings.Contains(out, "FAIL "+tc.fails) || !strings.Contains(out, "does NOT verify") {
				t.Fatalf("exit %d, want 1 with %q failing:\n%s", code, tc.fails, out)
			}
		})
	}
	if code, out := run("not a url"); code != 2 {
		t.Fatalf("bad URL: exit %d\n%s", code, out)
	}
}
