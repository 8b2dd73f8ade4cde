// Package beacontest serves recorded rounds of real drand chains over
// drand's HTTP API on a local port, for tests of the beacon client, the
// draw and its verifiers.
package beacontest

import (
	_ "embed"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/beacon"
)

//go:embed drand.json
var fixture []byte

// Chain is one recorded chain: its description and some of its rounds.
type Chain struct {
	Info   beacon.Info    `json:"info"`
	Rounds []beacon.Round `json:"rounds"`
}

// Chains returns the recorded chains: drand's "default" network
// (pedersen-bls-chained) first, then "quicknet" (bls-unchained-g1-rfc9380).
func Chains() []Chain {
	var f struct {
		Chains []Chain `json:"chains"`
	}
	if err := json.Unmarshal(fixture, &f); err != nil {
		panic("beacontest: " + err.Error())
	}
	return f.Chains
}

// Server serves the recorded chains at /<chain hash>/info and
// /<chain hash>/public/<round>. Rounds can be hidden (404, as drand
// answers for a round not yet published) or replaced (a tampered round).
type Server struct {
	*httptest.Server
	mu     sync.Mutex // guards chains and hidden
	chains map[string]*Chain
	hidden map[uint64]bool
	// Requests counts the answered requests.
	Requests int
}

// Start serves the recorded chains until the test ends.
func Start(t testing.TB) *Server {
	return StartOn(t, nil)
}

// StartOn serves the recorded chains on ln (a relay that comes up at an
// address known before), or on a port of its own when ln is nil.
func StartOn(t testing.TB, ln net.Listener) *Server {
	s := &Server{chains: map[string]*Chain{}, hidden: map[uint64]bool{}}
	for _, c := range Chains() {
		s.chains[c.Info.Hash] = &c
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if ln != nil {
		s.Server.Listener.Close()
		s.Server.Listener = ln
	}
	s.Server.Start()
	t.Cleanup(s.Close)
	return s
}

// URL returns the chain's base URL, as --beacon-url takes it.
func (s *Server) ChainURL(hash string) string { return s.Server.URL + "/" + hash }

// Hide makes round n unpublished (true) or published again (false).
func (s *Server) Hide(n uint64, hidden bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hidden[n] = hidden
}

// Put adds or replaces a round of chain hash.
func (s *Server) Put(hash string, r beacon.Round) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chains[hash]
	for i := range c.Rounds {
		if c.Rounds[i].Round == r.Round {
			c.Rounds[i] = r
			return
		}
	}
	c.Rounds = append(c.Rounds, r)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests++
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	c, ok := s.chains[parts[0]]
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case len(parts) == 2 && parts[1] == "info":
		_ = json.NewEncoder(w).Encode(c.Info)
		return
	case len(parts) == 3 && parts[1] == "public":
		n, err := strconv.ParseUint(parts[2], 10, 64)
		if err != nil || s.hidden[n] {
			http.NotFound(w, r)
			return
		}
		for _, round := range c.Rounds {
			if round.Round == n {
				_ = json.NewEncoder(w).Encode(round)
				return
			}
		}
	}
	http.NotFound(w, r)
}
