package api

import (
	"encoding/binary"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/aditus-queue/aditus-queue/actors/front"
	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
	"github.com/aditus-queue/aditus-queue/transport/spent"
)

// Proof of work before a join (seed: "proof-of-work bot protection"). The
// challenge is stateless and signed for the room (room.SignChallenge), so
// any front node issues and checks it. What a node remembers is only which
// challenges it has seen spent (package spent).

// maxSpent bounds the spent challenges a node remembers: enough for 1,700
// solved joins a second on one node, sustained for the five minutes a
// challenge lives (512 Ki entries, about 26 MB when full).
var maxSpent = spent.Limit(1700, room.ChallengeTTL)

// spentChallenges is shared by every server of the process: one process
// is one node.
var spentChallenges = spent.New(maxSpent)

// powAnswer is GET /pow's answer, and the "pow" field of a 428.
type powAnswer struct {
	Queue            string `json:"queue"`
	Enabled          bool   `json:"enabled"`
	Challenge        string `json:"challenge,omitempty"`
	Bits             int    `json:"bits,omitempty"`
	ExpiresInSeconds int    `json:"expiresInSeconds,omitempty"`
	Algorithm        string `json:"algorithm,omitempty"`
}

func powKey(r *front.Room) ([]byte, error) {
	k, err := room.SubKey(r.TicketKey, "pow")
	if err != nil {
		return nil, protocol.ErrRoomUnavailable
	}
	return k, nil
}

// challenge issues a fresh challenge of room r at now, of the given bits.
func (s *Server) challenge(r *front.Room, now time.Time, bits int) (powAnswer, error) {
	on, _ := r.View.PowInForce()
	a := powAnswer{Queue: r.View.Config.Slug, Enabled: on}
	if !on {
		return a, nil
	}
	key, err := powKey(r)
	if err != nil {
		return a, err
	}
	if a.Challenge, err = room.NewChallenge(key, r.View.ID, bits, now); err != nil {
		return a, protocol.ErrRoomUnavailable
	}
	a.Bits = bits
	a.ExpiresInSeconds, a.Algorithm = int(room.ChallengeTTL/time.Second), "sha256"
	return a, nil
}

// handlePow answers a fresh challenge, or enabled: false. The challenge is
// as hard as a join from this address needs (powBits).
func (s *Server) handlePow(c echo.Context) error {
	r, err := s.room(c)
	if err != nil {
		return err
	}
	var bits int
	if on, _ := r.View.PowInForce(); on {
		bits = s.powBits(r, s.clientKey(c))
	}
	a, err := s.challenge(r, s.now(), bits)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, a)
}

// powBits is the work a join of room r from address key must prove: the
// bits in force (the room's, or pow.auto's), more when the address is
// over its budget.
func (s *Server) powBits(r *front.Room, key string) int {
	_, bits := r.View.PowInForce()
	return s.budgets.bits(r.View.ID, r.View.Config.AddressBudget, key, bits)
}

// checkPow lets a join through when sol solves a challenge of this room
// that is unexpired, at least bits hard, and not spent on this node, and
// returns how hard the challenge was. Otherwise it answers 428 with a
// fresh challenge of bits, so the visitor needs no second call. A
// solution is spent once checked, even if the join then fails.
func (s *Server) checkPow(r *front.Room, sol *powSolution, bits int) (solved int, err error) {
	now := s.now()
	if sol == nil || sol.Challenge == "" || sol.Nonce == "" {
		return 0, s.powRefusal(r, now, bits, "This waiting room asks for a proof of work: solve the challenge and send it with the join.")
	}
	key, err := powKey(r)
	if err != nil {
		return 0, err
	}
	ch, err := room.CheckSolution(key, r.View.ID, sol.Challenge, sol.Nonce, bits, now)
	msg := ""
	switch {
	case err == room.ErrChallengeExpired:
		msg = "The challenge has expired; solve the fresh one."
	case err == room.ErrChallengeEasy:
		msg = "The waiting room asks for harder work now; solve the fresh challenge."
	case err == room.ErrNotSolved:
		msg = "The nonce does not solve the challenge."
	case err != nil:
		msg = "The challenge was not issued by this waiting room."
	case !spentChallenges.Spend(binary.BigEndian.Uint64(ch.ID[:8]), uint32(ch.Expires.Unix()), uint32(now.Unix())):
		msg = "The challenge has been used already; solve the fresh one."
	}
	if msg != "" {
		return 0, s.powRefusal(r, now, bits, msg)
	}
	return ch.Bits, nil
}

// powRefusal is the 428 pow_required answer with a fresh challenge of
// bits and msg.
func (s *Server) powRefusal(r *front.Room, now time.Time, bits int, msg string) error {
	a, err := s.challenge(r, now, bits)
	if err != nil {
		return err
	}
	return &Error{Status: http.StatusPreconditionRequired, Code: "pow_required", Message: msg,
		Extra: map[string]any{"pow": a}}
}
