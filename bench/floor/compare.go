package floor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/bench/target"
)

// Side names which server a figure was measured on.
type Side string

// The sides of a comparison.
const (
	SideFloor Side = "floor"
	SideReal  Side = "real"
)

// Config is a floor comparison. The same load settings and the same client
// drive both sides.
type Config struct {
	// AdminToken creates and deletes the real server's test room.
	AdminToken string
	// AllowHosts names non-loopback hosts the real URL may have.
	AllowHosts []string
	// RoomRate is the test room's admission rate per minute.
	RoomRate int
	// Timeout bounds each request.
	Timeout time.Duration
	// Status is the HTTP load for the status profile (Profile is set by
	// Compare); Status.Duration 0 skips it.
	Status load.Config
	// Push is the ws load (BaseRate is set by Compare); Push.Sockets 0
	// skips it.
	Push load.PushConfig
	// OnStart, OnSecond and OnRound, when set, are told of progress.
	OnStart  func(side Side, p load.Profile)
	OnSecond func(side Side, s load.Second)
	OnRound  func(side Side, r load.Round)
}

// Pair is one profile measured on both sides.
type Pair struct {
	Profile     load.Profile
	Floor, Real load.Result
}

// ThroughputRatio reports the real server's achieved rate as a share of the
// floor's (1 = as fast as the floor).
func (p Pair) ThroughputRatio() float64 { return ratio(p.Real.Achieved(), p.Floor.Achieved()) }

// LatencyRatio reports the real server's q-quantile latency as a multiple
// of the floor's.
func (p Pair) LatencyRatio(q float64) float64 {
	return ratio(float64(p.Real.Latency.Quantile(q)), float64(p.Floor.Latency.Quantile(q)))
}

// TimeToAllRatio reports, for ws, the real server's time until every socket
// had the frame as a multiple of the floor's.
func (p Pair) TimeToAllRatio() float64 {
	return ratio(float64(p.Real.TimeToAll), float64(p.Floor.TimeToAll))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Result is a whole comparison, one pair per profile run.
type Result struct {
	Pairs []Pair
}

// Compare creates a test room on the real server at realBaseURL (which
// must pass the loopback guard), runs the status load against the status
// floor and then the real endpoint, then the ws load against the broadcast
// floor and then the real room, and deletes the room. The status floor
// answers with the exact bytes of one of the real server's status answers,
// so both sides send the same size.
func Compare(ctx context.Context, realBaseURL string, cfg Config) (Result, error) {
	base, err := target.Check(realBaseURL, cfg.AllowHosts)
	if err != nil {
		return Result{}, err
	}
	if cfg.Status.Duration == 0 && cfg.Push.Sockets == 0 {
		return Result{}, errors.New("floor: nothing to compare: neither status nor ws load configured")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = load.DefaultTimeout
	}
	conns := max(cfg.Status.Connections, min(cfg.Status.MaxInFlight, 1024), 16)
	client := load.NewClient(conns, timeout)
	defer client.CloseIdleConnections()

	room, err := target.NewAdmin(base, cfg.AdminToken, client).CreateRoom(ctx, max(cfg.RoomRate, 1))
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = func() error {
		queue := load.NewTarget(client, base, room.Slug)
		if cfg.Status.Duration > 0 {
			p, err := compareStatus(ctx, client, queue, room.Slug, cfg)
			if err != nil {
				return err
			}
			res.Pairs = append(res.Pairs, p)
		}
		if cfg.Push.Sockets > 0 {
			p, err := comparePush(ctx, client, queue, room, cfg)
			if err != nil {
				return err
			}
			res.Pairs = append(res.Pairs, p)
		}
		return nil
	}()
	if derr := room.Delete(ctx); derr != nil {
		err = errors.Join(err, derr)
	}
	return res, err
}

func compareStatus(ctx context.Context, client *http.Client, queue *load.Target, slug string, cfg Config) (Pair, error) {
	tickets, err := queue.JoinMany(ctx, load.DefaultTickets)
	if err != nil {
		return Pair{}, fmt.Errorf("floor: %w", err)
	}
	body, retryAfter, err := queue.StatusBody(ctx, tickets[0])
	if err != nil {
		return Pair{}, fmt.Errorf("floor: sample status answer: %w", err)
	}
	srv, err := NewStatusServer(body, retryAfter)
	if err != nil {
		return Pair{}, fmt.Errorf("floor: start status server: %w", err)
	}
	defer srv.Close()

	lc := cfg.Status
	lc.Profile = load.ProfileStatus
	lc.Tickets = tickets
	p := Pair{Profile: load.ProfileStatus}
	for _, side := range []Side{SideFloor, SideReal} {
		t := queue
		if side == SideFloor {
			t = load.NewTarget(client, srv.URL(), slug)
		}
		if cfg.OnStart != nil {
			cfg.OnStart(side, load.ProfileStatus)
		}
		c := lc
		if cfg.OnSecond != nil {
			c.OnSecond = func(s load.Second) { cfg.OnSecond(side, s) }
		}
		r, err := load.Run(ctx, t, c)
		if err != nil {
			return p, fmt.Errorf("floor: status on %s: %w", side, err)
		}
		if side == SideFloor {
			p.Floor = r
		} else {
			p.Real = r
		}
	}
	return p, nil
}

func comparePush(ctx context.Context, client *http.Client, queue *load.Target, room *target.Room, cfg Config) (Pair, error) {
	tickets, err := queue.JoinMany(ctx, cfg.Push.Sockets)
	if err != nil {
		return Pair{}, fmt.Errorf("floor: %w", err)
	}
	srv, err := NewBroadcastServer()
	if err != nil {
		return Pair{}, fmt.Errorf("floor: start broadcast server: %w", err)
	}
	defer srv.Close()

	p := Pair{Profile: load.ProfileWS}
	for _, side := range []Side{SideFloor, SideReal} {
		t, changer := queue, load.RateChanger(room)
		if side == SideFloor {
			t, changer = load.NewTarget(client, srv.URL(), room.Slug), srv
		}
		if cfg.OnStart != nil {
			cfg.OnStart(side, load.ProfileWS)
		}
		c := cfg.Push
		c.BaseRate = max(cfg.RoomRate, 1)
		if cfg.OnRound != nil {
			c.OnRound = func(r load.Round) { cfg.OnRound(side, r) }
		}
		r, err := load.Push(ctx, t, tickets, changer, c)
		if err != nil {
			return p, fmt.Errorf("floor: ws on %s: %w", side, err)
		}
		if side == SideFloor {
			p.Floor = r
		} else {
			p.Real = r
		}
	}
	return p, nil
}

var _ load.RateChanger = (*target.Room)(nil)
