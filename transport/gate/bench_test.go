package gate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/transport/gate"
)

// BenchmarkGate measures what the gate adds to a request: the offline
// check of a valid cookie (the common case) and the redirect of a request
// without a token.
func BenchmarkGate(b *testing.B) {
	secret := []byte("a room secret of 43 characters, as rooms have")
	g, err := gate.New("sale", secret, "https://queue.example.com/queue/sale")
	if err != nil {
		b.Fatal(err)
	}
	h := g.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tok, _, _ := token.Mint(secret, "sale", 1, false, time.Now(), 10*time.Minute)
	b.Run("valid cookie", func(b *testing.B) {
		r := httptest.NewRequest("GET", "https://shop.example.com/event/42", nil)
		r.AddCookie(&http.Cookie{Name: gate.DefaultCookie, Value: tok})
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	})
	b.Run("no token", func(b *testing.B) {
		r := httptest.NewRequest("GET", "https://shop.example.com/event/42?seat=7", nil)
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	})
}
