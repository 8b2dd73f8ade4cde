package drawcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// Options steer a verification from outside.
type Options struct {
	// Number, when set, is the number whose position to recompute and
	// compare with what /status says; Ticket is its ticket (without one,
	// /status is asked by bare number, which a room may refuse).
	Number uint64
	Ticket string
	// Commitment is the hash the verifier noted while the draw was sealed;
	// empty: the one /info shows.
	Commitment string
	// Samples is how many numbers besides Number to compare with /status
	// (by bare number); default 5.
	Samples int
	Client  *http.Client
}

// maxAnswer bounds what the verifier reads from the room.
const maxAnswer = 1 << 20

// RoomURL turns what a visitor has (the waiting page, /info or /draw) into
// the room's base URL, …/queue/<slug>.
func RoomURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "queue" && parts[i+1] != "" {
			u.Path, u.RawQuery, u.Fragment = "/"+strings.Join(parts[:i+2], "/"), "", ""
			return u.String(), nil
		}
	}
	return "", fmt.Errorf("%q is not a waiting room's URL (…/queue/<slug>)", raw)
}

// Verify fetches the room's commitment and reveal at base (…/queue/<slug>)
// and checks them; then the whole permutation, and the positions /status
// gives for opt.Number and a sample, against the recomputed ones.
func Verify(ctx context.Context, base string, opt Options) (Report, error) {
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opt.Samples == 0 {
		opt.Samples = 5
	}
	var info struct {
		Draw *struct {
			State string `json:"state"`
			room.PublicCommitment
		} `json:"draw"`
	}
	if st, err := getJSON(ctx, opt.Client, base+"/info", &info); err != nil || st != http.StatusOK {
		return Report{}, fmt.Errorf("GET /info: status %d %v", st, err)
	}
	if info.Draw == nil {
		return Report{}, errors.New("the room has no committed draw")
	}
	// /info shows the room's current draw; armed again after a draw, that
	// is the next one, and the reveal is of the draw made before it.
	var published *room.PublicCommitment
	if info.Draw.State == "drawn" {
		published = &info.Draw.PublicCommitment
	}
	if opt.Commitment != "" {
		published = &room.PublicCommitment{Hash: strings.ToLower(opt.Commitment)}
	}
	var rev room.Reveal
	st, err := getJSON(ctx, opt.Client, base+"/draw", &rev)
	switch {
	case err == nil && st == http.StatusTooEarly:
		return Report{}, fmt.Errorf("the draw is %s (commitment %s): it is not made yet", info.Draw.State, info.Draw.Hash)
	case err != nil || st != http.StatusOK:
		return Report{}, fmt.Errorf("GET /draw: status %d %v", st, err)
	}
	rep, d := Check(&rev, published)
	if d == nil {
		return rep, nil
	}
	if err := d.Bijection(); err != nil {
		rep.add("bijection", false, "%v", err)
	} else {
		rep.add("bijection", true, "every number %d … %d has its own place", d.From+1, d.To)
	}
	comparePositions(ctx, &rep, d, base, opt)
	return rep, nil
}

// comparePositions compares recomputed positions with /status.
func comparePositions(ctx context.Context, rep *Report, d *Draw, base string, opt Options) {
	if opt.Number != 0 {
		p, err := d.Position(opt.Number)
		if err != nil {
			rep.add("number", false, "%v", err)
			return
		}
		q := "number=" + strconv.FormatUint(opt.Number, 10)
		if opt.Ticket != "" {
			q = "ticket=" + url.QueryEscape(opt.Ticket)
		}
		compareOne(ctx, rep, opt.Client, base+"/status?"+q, opt.Number, p, true)
	}
	size := d.To - d.From
	for i := 0; i < opt.Samples && uint64(i) < size; i++ {
		n := d.From + 1 + uint64(i)*(size/uint64(opt.Samples))
		if n == opt.Number {
			continue
		}
		p, _ := d.Position(n)
		if !compareOne(ctx, rep, opt.Client, base+"/status?number="+strconv.FormatUint(n, 10), n, p, false) {
			return
		}
	}
}

// compareOne compares n's recomputed position p with /status at u; a room
// that does not answer bare numbers is noted (must: a failure), not failed.
func compareOne(ctx context.Context, rep *Report, c *http.Client, u string, n, p uint64, must bool) bool {
	var s struct {
		Number   uint64  `json:"number"`
		Position *uint64 `json:"position"`
	}
	st, err := getJSON(ctx, c, u, &s)
	switch {
	case err != nil || (st != http.StatusOK && must):
		rep.add("status", false, "number %d: /status answered %d %v", n, st, err)
		return false
	case st != http.StatusOK:
		rep.note("status", "the room does not answer /status by bare number (%d): sample not compared", st)
		return false
	case s.Position == nil:
		return rep.add("position", false, "number %d: /status gives no drawn position", n)
	}
	return rep.add("position", *s.Position == p, "number %d: recomputed %d, /status says %d", n, p, *s.Position)
}

func getJSON(ctx context.Context, c *http.Client, u string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, nil
	}
	return res.StatusCode, json.Unmarshal(b, v)
}
