package ratelimit

import (
	"strconv"
	"time"

	"github.com/aditus-queue/aditus-queue/transport/clientaddr"
)

// Addresses bounds the client addresses one room's budget remembers on a
// node (about 200 bytes each with the table's own list and map entries:
// 13 MB for a full table). Beyond it the least recently seen is forgotten
// and starts again with a full bucket, as an idle address would have.
const Addresses = 1 << 16

// PerAddress is the config of a room's budget per client address
// (clientaddr.Key: an IPv4 address, an IPv6 /64) of rate tokens a second
// and burst at most: a table of Addresses keys, each IPv6 /64 also
// spending from its /56 and /48 (clientaddr.Wider), so that a client
// holding a whole prefix gets the prefix's budget, not one per /64.
func PerAddress(rate float64, burst int, now func() time.Time) Config {
	return Config{Rate: rate, Burst: burst, Capacity: Addresses, Now: now,
		Groups: clientaddr.Wider, Scales: clientaddr.WiderScales}
}

// RetryAfter is the Retry-After header's value for a wait of d: whole
// seconds rounded up, so that a client waiting that long finds its token,
// and at least one, so that it never comes back at once.
func RetryAfter(d time.Duration) string {
	if d <= time.Second {
		return "1"
	}
	s := d / time.Second
	if d%time.Second != 0 {
		s++
	}
	return strconv.FormatInt(int64(s), 10)
}
