package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
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

// The real binary with --beacon-url at a chain whose committed round never
// comes (the local server holds only recorded past rounds): the draw waits
// --beacon-wait past the round's time, is made with the key alone, says so,
// and `draw verify` passes it with that note. A beacon URL the relay says is
// wrong (no such chain) keeps the node from starting, with one line.
func TestDrawVerifyAgainstServer(t *testing.T) {
	srv := beacontest.Start(t)
	quick := beacontest.Chains()[1].Info.Hash
	s := startServer(t, t.TempDir(), freeAddr(t), "--admin-token", drawTestToken, "--beacon-url", srv.ChainURL(quick), "--beacon-wait", "1")
	opens := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	body := `{"slug":"fair","name":"Fair sale","ratePerMinute":60,"active":true,"opensAt":"` + opens + `"}`
	req, _ := http.NewRequest("POST", s.base+"/api/admin/queue/sites", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+drawTestToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v %v", res, err)
	}
	res.Body.Close()
	var ticket string
	for range 5 {
		res, err := http.Post(s.base+"/queue/fair/join", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		var j struct{ Ticket string }
		_ = json.NewDecoder(res.Body).Decode(&j)
		res.Body.Close()
		ticket = j.Ticket
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.base + "/queue/fair/draw")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no draw within 30 s of the opening")
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, err := exec.Command(binary(t), "draw", "verify", s.base+"/queue/fair", "--number", "5", "--ticket", ticket).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "the draw verifies") || !strings.Contains(string(out), "made with the key alone") ||
		!strings.Contains(string(out), "ok   position   number 5") {
		t.Fatalf("draw verify: %v\n%s", err, out)
	}
	if srv.Requests < 2 {
		t.Fatalf("the node asked the beacon %d times, want its info and the round", srv.Requests)
	}

	cmd := exec.Command(binary(t), "serve", "--addr", freeAddr(t), "--data-dir", t.TempDir(), "--admin-token", drawTestToken, "--beacon-url", srv.URL+"/no-such-chain")
	cmd.Env = envWithoutAQ()
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--beacon-url") || len(strings.Split(strings.TrimSpace(string(out)), "\n")) != 1 {
		t.Fatalf("unreadable beacon: %v\n%s", err, out)
	}
}

// drawTestToken is the servers' admin token in these tests.
const drawTestToken = "draw-test-admin-token-0123456789"

// The real binary with --beacon-url at a relay that cannot be reached (a
// closed port) starts and serves, warns, and says in
// aditus_queue_beacon_chain_known that it has no chain; once the relay
// comes up on that port it reads the chain and the gauge says so.
func TestServeBeaconRelayDownAtStart(t *testing.T) {
	relay, ops := freeAddr(t), freeAddr(t)
	quick := beacontest.Chains()[1].Info.Hash
	s := startServer(t, t.TempDir(), freeAddr(t), "--admin-token", drawTestToken, "--beacon-url", "http://"+relay+"/"+quick, "--ops-addr", ops)
	known := func() string {
		res, err := http.Get("http://" + ops + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		for _, line := range strings.Split(b.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "aditus_queue_beacon_chain_known "); ok {
				return v
			}
		}
		t.Fatalf("no aditus_queue_beacon_chain_known in the metrics")
		return ""
	}
	if got := known(); got != "0" {
		t.Fatalf("chain known %s with the relay down, want 0", got)
	}
	if !strings.Contains(s.output(), "beacon relay unreachable") {
		t.Fatalf("no warning about the relay:\n%s", s.output())
	}
	ln, err := net.Listen("tcp", relay)
	if err != nil {
		t.Skipf("the relay's port was taken meanwhile: %v", err)
	}
	beacontest.StartOn(t, ln)
	deadline := time.Now().Add(20 * time.Second)
	for known() != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("the chain was not read within 20 s of the relay coming up:\n%s", s.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
