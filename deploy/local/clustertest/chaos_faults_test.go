package clustertest

import (
	mrand "math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/bench/load"
)

// The soak's faults, one every chaosEvery while the load lasts, each over
// (the members it killed healthy again) before the next: mostly SIGKILL of
// the room's host, restarted chaosDown later on the same ports (the
// fail-over figures come from these); the fourth kills two members of three
// at once (the survivor must stay, the log's heartbeats tell it the others
// are gone); the eleventh (or the last that fits in the load) stops the
// soak's own broker for 5 s. The graceful
// roll under load is TestRollUnderLoad, run by chaos.sh after the soak.

// chaosRig is what the faults act on.
type chaosRig struct {
	t     *testing.T
	c     *cluster
	ports [][3]int
	room  string
	// broker runs kafka.sh on the soak's own broker.
	broker func(verb string)
	start  time.Time
}

// run makes faults until end and returns them.
func (r *chaosRig) run(end time.Time) []kill {
	var kills []kill
	next := r.start.Add(chaosEvery)
	brokerDone := false
	for i := 0; next.Add(chaosDown + time.Second).Before(end); i++ {
		time.Sleep(time.Until(next))
		var k kill
		switch {
		case i == 3:
			k = r.killMembers(2)
		case !brokerDone && (i >= 10 || time.Until(end) < 16*time.Second):
			// After ten kills of the host (the fail-over figures), or
			// while it still fits in the load.
			k, brokerDone = r.brokerOutage(), true
		default:
			k = r.killMembers(1)
		}
		kills = append(kills, k)
		r.t.Logf("%s %s (hosting the room: %v) at +%.1fs, restarted at +%.1fs, healthy at +%.1fs", k.what, k.member, k.hosted,
			k.at.Sub(r.start).Seconds(), k.restart.Sub(r.start).Seconds(), k.healthy.Sub(r.start).Seconds())
		next = next.Add(chaosEvery)
		if soon := time.Now().Add(time.Second); next.Before(soon) {
			next = soon
		}
	}
	return kills
}

// killMembers kills n members at once, the room's host first, and starts
// them again chaosDown later (a second more for two).
func (r *chaosRig) killMembers(n int) kill {
	c := r.c
	host, _ := c.host(r.room)
	first := slices.Index(c.members, host)
	if first < 0 {
		first = mrand.IntN(len(c.members))
	}
	picked := []int{first}
	for len(picked) < n {
		if i := mrand.IntN(len(c.members)); !slices.Contains(picked, i) {
			picked = append(picked, i)
		}
	}
	k := kill{what: "killed", hosted: host != nil, at: time.Now()}
	if n > 1 {
		k.what = "killed together"
	}
	for _, i := range picked {
		c.members[i].kill()
		if k.member != "" {
			k.member += "+"
		}
		k.member += c.members[i].name
	}
	time.Sleep(chaosDown + time.Duration(n-1)*time.Second)
	k.restart = time.Now()
	for _, i := range picked {
		p := c.members[i]
		c.members[i] = c.start(p.name, true, r.ports[i][0], r.ports[i][1], r.ports[i][2])
	}
	for _, i := range picked {
		c.members[i].waitHealthy(60 * time.Second)
	}
	k.healthy = time.Now()
	return k
}

// brokerOutage stops the soak's broker for 5 s.
func (r *chaosRig) brokerOutage() kill {
	k := kill{what: "stopped the broker", member: "kafka", at: time.Now()}
	r.broker("stop")
	time.Sleep(5 * time.Second)
	k.restart = time.Now()
	r.broker("start")
	k.healthy = time.Now()
	return k
}

// failovers returns, for each kill of the room's host, the time from the
// kill to the first join due after it that was answered, in order.
func failovers(kills []kill, joins []sent) []time.Duration {
	var out []time.Duration
	for i, d := range firstAnswers(kills, joins) {
		if k := kills[i]; k.hosted && k.member != "kafka" && d >= 0 {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// firstAnswers returns, for each fault, the time from the fault to the
// earliest answer to a join due after it (-1 when none within a minute).
// The fault windows overlap (a window lasts until the killed member has
// settled again, longer than the pause between faults), so this is taken
// from every join, not from those counted in the fault's window.
func firstAnswers(kills []kill, joins []sent) []time.Duration {
	var ok []sent
	for _, j := range joins {
		if j.class == load.OK {
			ok = append(ok, j)
		}
	}
	sort.Slice(ok, func(a, b int) bool { return ok[a].due.Before(ok[b].due) })
	out := make([]time.Duration, len(kills))
	for n, k := range kills {
		i := sort.Search(len(ok), func(i int) bool { return ok[i].due.After(k.at) })
		first := time.Duration(-1)
		for _, j := range ok[i:] {
			if j.due.Sub(k.at) > time.Minute {
				break
			}
			if d := j.due.Add(j.latency).Sub(k.at); first < 0 || d < first {
				first = d
			}
		}
		out[n] = first
	}
	return out
}
