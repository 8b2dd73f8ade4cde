package api

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// checkChallenge checks the shape of a challenge answer (GET /pow, and the
// pow field of a 428).
func checkChallenge(t *testing.T, what string, m map[string]any, bits int) (challenge string) {
	t.Helper()
	if keysOf(m) != "algorithm,bits,challenge,enabled,expiresInSeconds,queue" || m["enabled"] != true ||
		m["algorithm"] != "sha256" || m["expiresInSeconds"] != 300.0 || m["bits"] != float64(bits) || m["queue"] != "pow" {
		t.Fatalf("%s: got %v, want {queue: pow, enabled: true, challenge, bits: %d, expiresInSeconds: 300, algorithm: sha256}", what, m, bits)
	}
	return m["challenge"].(string)
}

func TestProofOfWork(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, _ := w.createRoom("pow", 6000)
	other, _ := w.createRoom("pow-other", 6000)

	st, m, h := w.do("GET", "/queue/pow/pow", "", nil)
	if st != 200 || keysOf(m) != "enabled,queue" || m["enabled"] != false || m["queue"] != "pow" || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("pow off: %d %v %v", st, m, h)
	}
	if st, m, _ := w.do("GET", "/queue/nope/pow", "", nil); st != 404 {
		t.Fatalf("pow of an unknown room: %d %v", st, m)
	}
	site := w.patchSite(id, func(s map[string]any) { s["pow"] = map[string]any{"enabled": true} })
	if p := site["pow"].(map[string]any); p["bits"] != 15.0 {
		t.Fatalf("pow enabled without bits: got %v, want the default 15", p)
	}
	w.patchSite(other, func(s map[string]any) { s["pow"] = map[string]any{"enabled": true, "bits": 8} })
	if st, m, _ := w.do("PATCH", "/api/admin/queue/sites/"+id, adminTok, map[string]any{"name": "x", "ratePerMinute": 1,
		"pow": map[string]any{"enabled": true, "bits": 25}}); st != 422 || m["field"] != "pow.bits" {
		t.Fatalf("pow.bits 25: got %d %v, want 422 naming pow.bits", st, m)
	}

	_, m, _ = w.do("GET", "/queue/pow/pow", "", nil)
	ch := checkChallenge(t, "GET /pow", m, 15)
	started := time.Now()
	nonce := room.SolvePow(ch, 15)
	t.Logf("solved 15 bits in %v (nonce %s)", time.Since(started), nonce)

	join := func(pow map[string]any) (int, map[string]any) {
		t.Helper()
		var body any
		if pow != nil {
			body = map[string]any{"pow": pow}
		}
		st, m, _ := w.do("POST", "/queue/pow/join", "", body)
		return st, m
	}
	refused := func(what string, pow map[string]any) map[string]any {
		t.Helper()
		st, m := join(pow)
		if st != http.StatusPreconditionRequired || m["error"] != "pow_required" || m["message"] == "" || keysOf(m) != "error,message,pow" {
			t.Fatalf("%s: got %d %v, want 428 pow_required with a fresh challenge", what, st, m)
		}
		checkChallenge(t, what, m["pow"].(map[string]any), 15)
		return m["pow"].(map[string]any)
	}
	refused("join without a solution", nil)
	refused("join with an empty solution", map[string]any{})
	fresh := refused("join with a wrong nonce", map[string]any{"challenge": ch, "nonce": "not-a-solution"})
	if fresh["challenge"] == ch {
		t.Fatal("the 428 answer repeats the old challenge")
	}
	_, om, _ := w.do("GET", "/queue/pow-other/pow", "", nil)
	foreign := om["challenge"].(string)
	refused("join with another room's challenge", map[string]any{"challenge": foreign, "nonce": room.SolvePow(foreign, 15)})
	refused("join with a made-up challenge", map[string]any{"challenge": strings.Repeat("A", len(ch)), "nonce": "1"})

	st, j := join(map[string]any{"challenge": ch, "nonce": nonce})
	if st != 200 || j["number"] != 1.0 || j["ticket"] == "" {
		t.Fatalf("join with a solution: %d %v", st, j)
	}
	refused("the same solution again", map[string]any{"challenge": ch, "nonce": nonce})

	// The fresh challenge of a 428 is enough: no second call needed.
	fc := fresh["challenge"].(string)
	if st, j := join(map[string]any{"challenge": fc, "nonce": room.SolvePow(fc, 15)}); st != 200 || j["number"] != 2.0 {
		t.Fatalf("join with the 428's challenge: %d %v", st, j)
	}

	// Expired: the challenge lives 300 s.
	_, m, _ = w.do("GET", "/queue/pow/pow", "", nil)
	late := m["challenge"].(string)
	lateNonce := room.SolvePow(late, 15)
	w.clock.Advance(299 * time.Second)
	if st, _ := join(map[string]any{"challenge": late, "nonce": lateNonce}); st != 200 {
		t.Fatalf("join 299 s after the challenge: %d", st)
	}
	_, m, _ = w.do("GET", "/queue/pow/pow", "", nil)
	expiring := m["challenge"].(string)
	w.clock.Advance(301 * time.Second)
	refused("an expired challenge", map[string]any{"challenge": expiring, "nonce": room.SolvePow(expiring, 15)})

	// Raising the difficulty refuses the easier challenges still out.
	_, m, _ = w.do("GET", "/queue/pow/pow", "", nil)
	easy := m["challenge"].(string)
	w.patchSite(id, func(s map[string]any) { s["pow"] = map[string]any{"enabled": true, "bits": 16} })
	st, m2, _ := w.do("POST", "/queue/pow/join", "", map[string]any{"pow": map[string]any{"challenge": easy, "nonce": room.SolvePow(easy, 15)}})
	if st != 428 || m2["pow"].(map[string]any)["bits"] != 16.0 {
		t.Fatalf("a 15-bit challenge after raising to 16 bits: %d %v", st, m2)
	}
	w.patchSite(id, func(s map[string]any) { s["pow"] = map[string]any{"enabled": true, "bits": 15} })

	// One solution sent many times at once is taken once.
	_, m, _ = w.do("GET", "/queue/pow/pow", "", nil)
	race := m["challenge"].(string)
	sol := map[string]any{"pow": map[string]any{"challenge": race, "nonce": room.SolvePow(race, 15)}}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, _ := w.raw("POST", "/queue/pow/join", sol)
			mu.Lock()
			codes[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] != 1 || codes[428] != 19 {
		t.Fatalf("20 joins with one solution: got %v, want one 200 and 19 428", codes)
	}

	// While proof of work is on, nobody passes silently: the gateway sends
	// every visitor to the waiting room (where the page solves the work)
	// without drawing a number, and a join without work (embed.js's)
	// answers 428, which embed.js takes as "go to the waiting room".
	st, _, h = w.do("GET", "/queue/pow/enter", "", nil)
	if loc := h.Get("Location"); st != 302 || loc != "http://queue.test/queue/pow" {
		t.Fatalf("gateway with proof of work on: %d %s, want 302 to the waiting room", st, loc)
	}
	// The page is told to solve.
	if st, h, _ := w.raw("GET", "/queue/pow", nil); st != 200 || !strings.Contains(h.Get("Content-Type"), "text/html") {
		t.Fatalf("waiting-room page: %d %v", st, h)
	}

	// Off again: joins need nothing.
	w.patchSite(id, func(s map[string]any) { s["pow"] = map[string]any{"enabled": false} })
	if st, j := join(nil); st != 200 {
		t.Fatalf("join with proof of work off: %d %v", st, j)
	}
}
