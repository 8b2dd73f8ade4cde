package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/beacon/beacontest"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// The real binary with --beacon-url at a chain whose committed round never
// comes (the local server holds only recorded past rounds): the draw waits
// --beacon-wait past the round's time, is made with the key alone, says so,
// and `draw verify` passes it with that note. A beacon URL the relay says is
// wrong (no such chain) keeps the node from starting, with one line.
func TestDrawVerifyAgainstServer(t *testing.T) {
	srv := beacontest.Start(t)
	quick := beacontest.Chains()[1].Info.Hash
	s := startServer(t, t.TempDir(), testbin.FreeAddr(t), "--admin-token", drawTestToken, "--beacon-url", srv.ChainURL(quick), "--beacon-wait", "1")
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
	testwait.UntilEvery(t, 30*time.Second, 200*time.Millisecond, "the draw after the opening", func() bool { return answers(s.base + "/queue/fair/draw") })
	out, err := exec.Command(testbin.Binary(t), "draw", "verify", s.base+"/queue/fair", "--number", "5", "--ticket", ticket).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "the draw verifies") || !strings.Contains(string(out), "made with the key alone") ||
		!strings.Contains(string(out), "ok   position   number 5") {
		t.Fatalf("draw verify: %v\n%s", err, out)
	}
	if srv.Requests < 2 {
		t.Fatalf("the node asked the beacon %d times, want its info and the round", srv.Requests)
	}

	cmd := exec.Command(testbin.Binary(t), "serve", "--addr", testbin.FreeAddr(t), "--data-dir", t.TempDir(), "--admin-token", drawTestToken, "--beacon-url", srv.URL+"/no-such-chain")
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
	relay, ops := testbin.FreeAddr(t), testbin.FreeAddr(t)
	quick := beacontest.Chains()[1].Info.Hash
	s := startServer(t, t.TempDir(), testbin.FreeAddr(t), "--admin-token", drawTestToken, "--beacon-url", "http://"+relay+"/"+quick, "--ops-addr", ops)
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
	if !strings.Contains(s.Output(), "beacon relay unreachable") {
		t.Fatalf("no warning about the relay:\n%s", s.Output())
	}
	ln, err := net.Listen("tcp", relay)
	if err != nil {
		t.Skipf("the relay's port was taken meanwhile: %v", err)
	}
	beacontest.StartOn(t, ln)
	if !testwait.Poll(20*time.Second, 100*time.Millisecond, func() bool { return known() == "1" }) {
		t.Fatalf("the chain was not read within 20 s of the relay coming up:\n%s", s.Output())
	}
}
