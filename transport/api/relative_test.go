package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/grain"
)

// A node without a public URL redirects the gateway link's visitors with
// a relative address, on whatever address they reached it, never to an
// address it would have to guess.
func TestEnterWithoutPublicURLRedirectsRelative(t *testing.T) {
	e := newEnvWith(t, func(_ *grain.Deps, cfg *Config) { cfg.PublicURL = "" })
	e.createRoom("spring", 1)
	e.do("POST", "/queue/spring/join", "", nil) // the rate's one admission
	st, _, h := e.do("GET", "/queue/spring/enter", "", nil, "Accept", "text/html")
	if loc := h.Get("Location"); st != http.StatusFound || !strings.HasPrefix(loc, "/queue/spring?ticket=") {
		t.Fatalf("enter: %d Location %q, want 302 to /queue/spring?ticket=…", st, loc)
	}
}
