package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aditus-queue/aditus-queue/actors/grain"
	"github.com/aditus-queue/aditus-queue/actors/node"
	"github.com/aditus-queue/aditus-queue/dashboard/live"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// adminFront is a node serving the admin API, the live dashboard socket
// and the load-test socket with one authenticator, behind a proxy on
// loopback that it trusts, so each request names its client in
// X-Forwarded-For.
func adminFront(t *testing.T) (*env, *node.Node) {
	t.Helper()
	n, err := node.Start(node.Config{Member: true, Deps: grain.Deps{Log: memlog.New(), Sealer: sealer, Hash: sha, Logger: testLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	clients := clientaddr.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")})
	auth, err := adminauth.New(adminauth.Config{Directory: n.Client, AdminHash: sha(adminTok), Hash: sha, Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	hub := live.New(live.Config{Client: n.Client, Auth: auth, Logger: testLogger()})
	s := New(Config{Node: n.Front, PublicURL: "http://queue.test", AdminTokenHash: sha(adminTok), Hash: sha, Logger: testLogger(),
		Registry: prometheus.NewRegistry(), Clients: clients, Auth: auth, Extra: []func(*echo.Echo){hub.Register}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		hub.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Stop(ctx)
	})
	return &env{t: t, srv: srv}, n
}

// dialAdmin opens an admin socket at path as client ip, offering protocols,
// and sends first (if not empty) as an auth message.
func dialAdmin(t *testing.T, base, path, ip, first string, protocols ...string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	conn, res, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+path, http.Header{"X-Forwarded-For": {ip}})
	if err == nil && first != "" {
		b, _ := json.Marshal(map[string]string{"type": "auth", "token": first})
		_ = conn.WriteMessage(websocket.TextMessage, b)
	}
	return conn, res, err
}

// Failed sign-ins of one address count in one budget across the admin API
// and both admin sockets: ten, then 429 with Retry-After on every one of
// them, while another address and the operator's token from it are not
// slowed.
func TestAdminFailuresLimitedPerAddressEverywhere(t *testing.T) {
	e, _ := adminFront(t)
	id, _ := e.createRoom("limits", 60)
	const attacker, operator = "203.0.113.50", "198.51.100.20"
	live := "/api/admin/queue/sites/" + id + "/live"
	lt := "/api/admin/queue/loadtests/lt-none/live"

	for i := range 4 {
		if st, m, _ := e.do("GET", "/api/admin/queue/sites", "wrong-"+strconv.Itoa(i), nil, "X-Forwarded-For", attacker); st != http.StatusUnauthorized {
			t.Fatalf("HTTP failure %d: %d %v, want 401", i+1, st, m)
		}
	}
	for i := range 3 {
		conn, _, err := dialAdmin(t, e.srv.URL, live, attacker, "", adminws.Subprotocol, "bearer.wrong")
		if err != nil {
			t.Fatal(err)
		}
		if c := closeCode(t, conn); c != adminws.CloseUnauthorized {
			t.Fatalf("dashboard failure %d: close %d, want 4401", i+1, c)
		}
		conn.Close()
	}
	for i := range 3 {
		conn, _, err := dialAdmin(t, e.srv.URL, lt, attacker, "qak_"+id+"_forged")
		if err != nil {
			t.Fatal(err)
		}
		if c := closeCode(t, conn); c != adminws.CloseUnauthorized {
			t.Fatalf("load-test socket failure %d: close %d, want 4401", i+1, c)
		}
		conn.Close()
	}

	st, m, h := e.do("GET", "/api/admin/queue/sites", adminTok, nil, "X-Forwarded-For", attacker)
	if st != http.StatusTooManyRequests || m["error"] != "rate_limited" || h.Get("Retry-After") == "" {
		t.Fatalf("HTTP after ten failures: %d %v Retry-After %q, want 429 rate_limited with Retry-After", st, m, h.Get("Retry-After"))
	}
	for _, path := range []string{live, lt} {
		_, res, err := dialAdmin(t, e.srv.URL, path, attacker, "", adminws.Subprotocol, "bearer."+adminTok)
		if err == nil || res == nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Fatalf("socket %s after ten failures: %v %+v, want 429 with Retry-After", path, err, res)
		}
	}

	if st, m, _ := e.do("GET", "/api/admin/queue/sites", adminTok, nil, "X-Forwarded-For", operator); st != http.StatusOK {
		t.Fatalf("the operator from another address: %d %v", st, m)
	}
	if st, _, _ := e.do("GET", "/api/admin/queue/sites", "wrong", nil, "X-Forwarded-For", operator); st != http.StatusUnauthorized {
		t.Fatalf("another address's first failure: %d, want 401", st)
	}
	conn, _, err := dialAdmin(t, e.srv.URL, live, operator, "", adminws.Subprotocol, "bearer."+adminTok)
	if err != nil {
		t.Fatalf("the operator's dashboard from another address: %v", err)
	}
	conn.Close()
}

// Both admin sockets take both handshake forms: the token as a
// subprotocol, or as the first message, with or without the subprotocol.
func TestAdminSocketsTakeTheSameHandshakes(t *testing.T) {
	e, _ := adminFront(t)
	id, _ := e.createRoom("handshakes", 60)
	for _, path := range []string{"/api/admin/queue/sites/" + id + "/live", "/api/admin/queue/loadtests/lt-none/live"} {
		for _, form := range []struct {
			name      string
			first     string
			protocols []string
		}{
			{"subprotocol", "", []string{adminws.Subprotocol, "bearer." + adminTok}},
			{"first message with the subprotocol", adminTok, []string{adminws.Subprotocol}},
			{"first message alone", adminTok, nil},
		} {
			conn, _, err := dialAdmin(t, e.srv.URL, path, "192.0.2.77", form.first, form.protocols...)
			if err != nil {
				t.Fatalf("%s, %s: %v", path, form.name, err)
			}
			// A signed-in dashboard gets its first frame; a signed-in
			// load-test socket learns that the run does not exist.
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, _, err = conn.ReadMessage()
			if ce, ok := err.(*websocket.CloseError); ok && ce.Code != adminws.CloseNotFound {
				t.Errorf("%s, %s: closed %d, want signed in", path, form.name, ce.Code)
			} else if !ok && err != nil {
				t.Errorf("%s, %s: %v", path, form.name, err)
			}
			conn.Close()
		}
	}
}
