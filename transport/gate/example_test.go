package gate_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/transport/gate"
)

// A shop written in Go puts the gate in front of its handler; visitors
// without admission go to the waiting room, admitted ones reach the shop.
func Example() {
	secret := []byte("the room's secret, shown once when the room was created")
	g, err := gate.New("spring-sale", secret, "https://queue.example.com/queue/spring-sale")
	if err != nil {
		log.Fatal(err)
	}
	shop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := gate.ClaimsFrom(r.Context())
		fmt.Fprintf(w, "welcome, number %d", c.Number)
	})
	h := g.Wrap(shop) // http.ListenAndServe(":8443", h) in a real shop

	// Without a token: into the waiting room, which sends the visitor back
	// to this page with a token.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "https://shop.example.com/event/42", nil))
	fmt.Println(w.Code, w.Header().Get("Location"))

	// Back from the room with a token: kept in a cookie, URL cleaned.
	tok, _, _ := token.Mint(secret, "spring-sale", 7, false, time.Now(), 10*time.Minute)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "https://shop.example.com/event/42?aditus_queue_token="+tok, nil))
	fmt.Println(w.Code, w.Header().Get("Location"))

	// With the cookie: through to the shop.
	r := httptest.NewRequest("GET", "https://shop.example.com/event/42", nil)
	r.AddCookie(&http.Cookie{Name: gate.DefaultCookie, Value: tok})
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 302 https://queue.example.com/queue/spring-sale/enter?return=https%3A%2F%2Fshop.example.com%2Fevent%2F42
	// 302 /event/42
	// 200 welcome, number 7
}
