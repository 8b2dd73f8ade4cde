package api

import (
	"errors"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aditus-queue/aditus-queue/transport/adminauth"
	"github.com/aditus-queue/aditus-queue/transport/adminws"
)

// Admin sockets that have not signed in are bounded: with
// MaxPendingSockets of them waiting, the next upgrade is refused 503 busy
// with Retry-After (counted); a waiting socket is closed 4401 after
// adminws.AuthTimeout, and its place is free again.
func TestAdminSocketsPendingBounded(t *testing.T) {
	e := newEnv(t)
	path := "/api/admin/queue/loadtests/none/live"
	var waiting []*websocket.Conn
	for i := range adminauth.MaxPendingSockets {
		c, _, err := dialAdmin(t, e.srv.URL, path, "192.0.2.1", "", adminws.Subprotocol)
		if err != nil {
			t.Fatalf("pending socket %d refused: %v", i, err)
		}
		waiting = append(waiting, c)
	}
	defer func() {
		for _, c := range waiting {
			c.Close()
		}
	}()
	_, res, err := dialAdmin(t, e.srv.URL, path, "192.0.2.2", "", adminws.Subprotocol)
	if err == nil || res == nil || res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		st := 0
		if res != nil {
			st = res.StatusCode
		}
		t.Fatalf("upgrade beyond %d pending sockets: %v (%d), want 503 busy with Retry-After", adminauth.MaxPendingSockets, err, st)
	}
	if !regexp.MustCompile(`(?m)^aditus_queue_admin_sockets_refused_total 1$`).Match(metricsOf(e.registry)) {
		t.Fatal("the refusal is not counted")
	}
	// The first socket is closed once its time to sign in is over.
	_ = waiting[0].SetReadDeadline(time.Now().Add(adminws.AuthTimeout + 5*time.Second))
	_, _, err = waiting[0].ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != adminws.CloseUnauthorized {
		t.Fatalf("a silent socket: %v, want closed %d", err, adminws.CloseUnauthorized)
	}
	// Its place (and every other's, as they all timed out) is free.
	waitFor(t, 5*time.Second, "a place after the pending sockets timed out", func() bool {
		c, _, err := dialAdmin(t, e.srv.URL, path, "192.0.2.3", "", adminws.Subprotocol)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}
