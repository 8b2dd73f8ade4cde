package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/persistence/seal"
	"github.com/aditus-queue/aditus-queue/transport/ws"
)

// A front node started with another master key than the member's cannot
// open the room's secret and ticket key. It does not serve the room with
// empty keys (which sign and accept anything): every route answers 503
// room_unavailable with Retry-After, forged empty-key tokens and tickets
// are refused everywhere, /queue/healthz says the node is degraded and the
// gauge counts the room. The member, whose key opens it, serves the room.
func TestFrontWithAnotherMasterKeyDoesNotServeTheRoom(t *testing.T) {
	if raceDetector {
		t.Skip("a member and a front in one process race inside gRPC's global logger under -race; this test runs without -race")
	}
	clock := newStillClock()
	health := testbin.FreeAddr(t)
	member := &world{log: memlog.New(), clock: clock, health: health, peers: []string{health}}
	member.start(t)
	member.waitAnswer(t)
	id, secret := member.createRoom("locked", 60)
	if st, j, _ := member.do("POST", "/queue/locked/join", "", nil); st != http.StatusOK {
		t.Fatalf("join on the member: %d %v", st, j)
	}
	memberHTTP := serveNode(t, member.node, prometheus.NewRegistry(), clock)

	other, err := seal.NewSealer(bytes.Repeat([]byte{7}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	front, err := node.Start(node.Config{Peers: []string{health}, Deps: grain.Deps{Sealer: other, Hash: sha,
		Logger: testLogger(), Metrics: grain.NewMetrics(reg), Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		front.Stop(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := front.Client.List(ctx); err != nil {
		t.Fatalf("the front reaches no member: %v", err)
	}
	frontHTTP := serveNode(t, front, reg, clock)

	now := clock.Now()
	real, _, err := token.Mint([]byte(secret), "locked", 1, false, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	forged := forgeToken(nil, "locked", now)
	forgedTicket := forgeTicket(nil, id, 1)

	for _, r := range lockedRoutes(forged, forgedTicket, real) {
		st, j, h := frontHTTP.do(r.method, r.path, "", r.body)
		if st != http.StatusServiceUnavailable || j["error"] != protocol.CodeRoomUnavailable || h.Get("Retry-After") == "" {
			t.Errorf("front %s %s: %d %v (Retry-After %q), want 503 room_unavailable with Retry-After",
				r.method, r.path, st, j, h.Get("Retry-After"))
		}
	}
	st, j, _ := frontHTTP.do("GET", "/queue/healthz", "", nil)
	if st != http.StatusOK || j["status"] != "degraded" || j["roomsUnavailable"] != float64(1) || j["reason"] == "" {
		t.Errorf("front healthz: %d %v, want degraded with its reason", st, j)
	}
	if got := gaugeValue(t, reg, "aditus_queue_rooms_unavailable"); got != 1 {
		t.Errorf("aditus_queue_rooms_unavailable %v, want 1", got)
	}

	// The member holds the keys: the same forgeries are refused there, the
	// real token is valid.
	for _, r := range []struct{ method, path string }{
		{"GET", "/queue/locked/verify?token=" + url.QueryEscape(forged)},
		{"GET", "/queue/locked/status?ticket=" + forgedTicket},
		{"GET", "/queue/locked/ws?ticket=" + forgedTicket},
		{"POST", "/queue/locked/token"},
	} {
		var body any
		if r.method == "POST" {
			body = map[string]any{"ticket": forgedTicket}
		}
		if st, j, _ := memberHTTP.do(r.method, r.path, "", body); st != http.StatusUnauthorized {
			t.Errorf("member %s %s with a forged credential: %d %v, want 401", r.method, r.path, st, j)
		}
	}
	if st, j, _ := memberHTTP.do("GET", "/queue/locked/verify?token="+real, "", nil); st != http.StatusOK || j["valid"] != true {
		t.Errorf("member verify of the real token: %d %v", st, j)
	}
	if st, j, _ := memberHTTP.do("GET", "/queue/healthz", "", nil); st != http.StatusOK || j["status"] != "ok" {
		t.Errorf("member healthz: %d %v", st, j)
	}
}

type route struct {
	method, path string
	body         any
}

// lockedRoutes are the requests a front that cannot open the room must
// refuse, with forged and real credentials alike.
func lockedRoutes(forged, forgedTicket, real string) []route {
	return []route{
		{"POST", "/queue/locked/join", nil},
		{"GET", "/queue/locked/status?ticket=" + forgedTicket, nil},
		{"POST", "/queue/locked/token", map[string]any{"ticket": forgedTicket}},
		{"GET", "/queue/locked/verify?token=" + url.QueryEscape(forged), nil},
		{"GET", "/queue/locked/verify?token=" + url.QueryEscape(real), nil},
		{"POST", "/queue/locked/heartbeat", map[string]any{"ticket": forgedTicket}},
		{"GET", "/queue/locked/info", nil},
		{"GET", "/queue/locked/pow", nil},
		{"POST", "/queue/locked/bypass", map[string]any{"code": "ABCD-EFGH"}},
		{"GET", "/queue/locked/ws?ticket=" + forgedTicket, nil},
		{"GET", "/queue/locked", nil},
		{"GET", "/queue/locked/enter", nil},
	}
}

// serveNode serves the visitor API and the waiting page's socket of node n.
func serveNode(t *testing.T, n *node.Node, reg *prometheus.Registry, clock *stillClock) *env {
	t.Helper()
	hub, err := ws.NewHub(n.Views, testLogger(), clock.Now, ws.Limits{PerTicket: ws.DefaultPerTicket, PerNode: ws.DefaultPerNode})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Node: n.Front, PublicURL: "http://queue.test", AdminTokenHash: sha(adminTok), Hash: sha, Logger: testLogger(),
		Registry: reg, Now: clock.Now, Extra: []func(*echo.Echo){hub.Register}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		hub.Close()
	})
	return &env{t: t, srv: srv}
}

// forgeToken signs admission claims for slug as HS256 with key by hand, as
// an attacker guessing that a node holds an empty key would.
func forgeToken(key []byte, slug string, now time.Time) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"iss":%q,"aud":%q,"qnr":1,"iat":%d,"exp":%d}`,
		token.Issuer, slug, now.Unix(), now.Add(10*time.Minute).Unix()))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head + "." + body))
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// forgeTicket builds number n's ticket of room roomID by the documented
// encoding with key, without room.SignTicket's key check.
func forgeTicket(key []byte, roomID string, n uint64) string {
	var buf [24]byte
	binary.BigEndian.PutUint64(buf[:8], n)
	m := hmac.New(sha256.New, key)
	m.Write(binary.BigEndian.AppendUint64(append([]byte("ticket\x00"+roomID), 0), n))
	copy(buf[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

// gaugeValue reads an unlabelled gauge from reg.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
