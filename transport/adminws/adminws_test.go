package adminws

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestOfferedToken(t *testing.T) {
	for _, tc := range []struct {
		header string
		offers bool
		token  string
	}{
		{"", false, ""},
		{"aditus-queue.v1", true, ""},
		{"aditus-queue.v1, bearer.abc", true, "abc"},
		{"bearer.abc", false, "abc"},
		{"aditus-queue.v1, bearer.first, bearer.second", true, "first"},
		{"aditus-queue.v2, bearer.", false, ""},
	} {
		r := httptest.NewRequest(http.MethodGet, "/live?token=fromquery&access_token=fromquery", nil)
		if tc.header != "" {
			r.Header.Set("Sec-WebSocket-Protocol", tc.header)
		}
		if got := Offers(r); got != tc.offers {
			t.Errorf("%q: Offers = %v, want %v", tc.header, got, tc.offers)
		}
		if got := OfferedToken(r); got != tc.token {
			t.Errorf("%q: OfferedToken = %q, want %q", tc.header, got, tc.token)
		}
	}
}

// serve runs fn on the server side of one socket and returns the client
// side.
func serve(t *testing.T, fn func(*websocket.Conn)) *websocket.Conn {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{Subprotocol}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		fn(c)
	}))
	t.Cleanup(srv.Close)
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestReadAuth(t *testing.T) {
	type result struct {
		tok string
		err error
	}
	for _, tc := range []struct {
		name string
		msg  string
		want result
	}{
		{"auth message", `{"type":"auth","token":"abc"}`, result{"abc", nil}},
		{"empty token is the caller's to refuse", `{"type":"auth","token":""}`, result{"", nil}},
		{"another type", `{"type":"hello","token":"abc"}`, result{"", ErrAuthFormat}},
		{"not JSON", `-`, result{"", ErrAuthFormat}},
		{"trailing data", `{"type":"auth","token":"abc"} x`, result{"", ErrAuthFormat}},
		{"too large", `{"type":"auth","token":"` + strings.Repeat("a", ReadLimit) + `"}`, result{"", ErrNoToken}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan result, 1)
			c := serve(t, func(c *websocket.Conn) {
				tok, err := ReadAuth(c)
				got <- result{tok, err}
			})
			if err := c.WriteMessage(websocket.TextMessage, []byte(tc.msg)); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-got:
				if r != tc.want {
					t.Fatalf("got %q, %v; want %q, %v", r.tok, r.err, tc.want.tok, tc.want.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ReadAuth did not return")
			}
		})
	}
}

// A client that stays silent gets ErrNoToken once AuthTimeout has passed,
// and WriteClose tells it why.
func TestReadAuthSilentAndWriteClose(t *testing.T) {
	if testing.Short() {
		t.Skip("waits AuthTimeout")
	}
	c := serve(t, func(c *websocket.Conn) {
		_, err := ReadAuth(c)
		var r *Refusal
		if !errors.As(err, &r) {
			r = &Refusal{Code: websocket.CloseInternalServerErr, Reason: "unexpected"}
		}
		WriteClose(c, r.Code, r.Reason)
	})
	_ = c.SetReadDeadline(time.Now().Add(AuthTimeout + 10*time.Second))
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a close frame", err)
	}
	if ce.Code != CloseUnauthorized || ce.Text != ErrNoToken.Reason {
		t.Fatalf("got close %d %q, want %d %q", ce.Code, ce.Text, CloseUnauthorized, ErrNoToken.Reason)
	}
}
