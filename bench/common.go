package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/load"
	"github.com/aditus-queue/aditus-queue/bench/target"
)

// commonFlags are the flags of every command that sends load.
type commonFlags struct {
	url         string
	adminToken  string
	allowHosts  hostList
	roomRate    int
	duration    time.Duration
	maxRequests int
	maxInFlight int
	timeout     time.Duration
}

// Defaults of the test room.
const defaultRoomRate = 600

// defaultOpsURL is a server's operations listener (--ops-addr) as it
// listens by default: its /metrics and profiles are there, not on --url.
const defaultOpsURL = "http://127.0.0.1:9090"

func (c *commonFlags) register(fs *flag.FlagSet, defaultDuration time.Duration) {
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "base URL of the server under test; only loopback hosts unless --allow-host names it")
	fs.StringVar(&c.adminToken, "admin-token", "", "admin bearer token of the server under test, to create and delete the test room (default $"+adminTokenEnv+")")
	fs.Var(&c.allowHosts, "allow-host", "allow this non-loopback `host` as a target (repeatable); never aim at production rooms")
	fs.IntVar(&c.roomRate, "room-rate", defaultRoomRate, "admission rate per minute of the test room")
	fs.DurationVar(&c.duration, "duration", defaultDuration, fmt.Sprintf("how long to send load, at most %v", load.MaxDuration))
	fs.IntVar(&c.maxRequests, "max-requests", load.DefaultMaxRequests, fmt.Sprintf("hard cap on requests sent, at most %d", load.MaxRequestsCap))
	fs.IntVar(&c.maxInFlight, "max-in-flight", load.DefaultMaxInFlight, "open loop: most requests open at once; a send due beyond it is dropped and counted as an error")
	fs.DurationVar(&c.timeout, "timeout", load.DefaultTimeout, "timeout of each request (ws: of each wait for a frame)")
}

// check validates the common flags before any traffic and returns the
// checked base URL and the admin token.
func (c *commonFlags) check() (*url.URL, string, error) {
	base, err := target.Check(c.url, c.allowHosts)
	if err != nil {
		return nil, "", err
	}
	token := c.adminToken
	if token == "" {
		token = os.Getenv(adminTokenEnv)
	}
	switch {
	case token == "":
		return nil, "", errors.New("an admin token is needed to create the test room: pass --admin-token or set " + adminTokenEnv)
	case c.roomRate < 1:
		return nil, "", fmt.Errorf("--room-rate %d: want at least 1", c.roomRate)
	case c.duration <= 0 || c.duration > load.MaxDuration:
		return nil, "", fmt.Errorf("--duration %v: want more than 0 and at most %v", c.duration, load.MaxDuration)
	case c.maxRequests < 1 || c.maxRequests > load.MaxRequestsCap:
		return nil, "", fmt.Errorf("--max-requests %d: want 1 to %d", c.maxRequests, load.MaxRequestsCap)
	case c.maxInFlight < 1 || c.maxInFlight > load.MaxInFlightCap:
		return nil, "", fmt.Errorf("--max-in-flight %d: want 1 to %d", c.maxInFlight, load.MaxInFlightCap)
	case c.timeout <= 0 || c.timeout > time.Minute:
		return nil, "", fmt.Errorf("--timeout %v: want more than 0 and at most 1m", c.timeout)
	}
	return base, token, nil
}

// withRoom creates a test room, calls f with it and deletes it again,
// whatever f did. A room that could not be deleted is reported on stderr
// with what to do.
func withRoom(ctx context.Context, admin *target.Admin, rate int, stderr io.Writer, f func(*target.Room) error) error {
	room, err := admin.CreateRoom(ctx, rate)
	if err != nil {
		return err
	}
	ferr := f(room)
	if derr := room.Delete(ctx); derr != nil {
		fmt.Fprintf(stderr, "warning: the test room %s (id %s) could not be deleted: %v; delete it with DELETE /api/admin/queue/sites/%s\n", room.Slug, room.ID, derr, room.ID)
	}
	return ferr
}
