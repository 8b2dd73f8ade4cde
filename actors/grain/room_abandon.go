package grain

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// The room grain's part of abandon detection: presence reports, and the
// scan for silent numbers ahead of the window (the rules are in
// actors/room/abandon.go).

const (
	// abandonInterval is how often the grain looks for abandoned numbers
	// ahead of the window; abandonAhead how far ahead it looks, a little
	// more than one interval of the rate, so the window never reaches a
	// position no scan has examined.
	abandonInterval = 2 * time.Second
	abandonAhead    = 3 * time.Second
)

// seen records presence reports (a join is the first). Numbers never
// issued are ignored: a report must not make the memory grow for nobody.
// Presence counts places: a jump number not yet placed is placed first.
func (g *roomGrain) seen(numbers []uint64, now int64) {
	g.placeReturns(numbers)
	if !g.st.Config.Abandon.Enabled {
		return
	}
	for _, n := range numbers {
		if c, ok := g.st.PlaceOf(n); ok && n <= g.st.Issued {
			g.presence.Seen(c, now)
		}
	}
}

// scanAbandoned looks for silent numbers just ahead of the window. Most
// scans find nothing and write nothing; when one finds some, the write is
// queued and decides again against the state it finds then.
func (g *roomGrain) scanAbandoned(now int64) {
	if !g.st.Config.Abandon.Enabled {
		// Nobody reports presence while detection is off.
		g.presence.Forget(&g.st.View, now)
		return
	}
	if g.abandoning {
		return
	}
	evs, cursor := g.st.DecideAbandon(g.presence, now, abandonAhead)
	if len(evs) == 0 {
		g.presence.Examined(&g.st.View, cursor)
		return
	}
	g.abandoning = true
	g.writes.add(&task{kind: "abandon", decide: func(now int64) ([]room.Event, error) {
		evs, cursor := g.st.DecideAbandon(g.presence, now, abandonAhead)
		if len(evs) == 0 {
			g.presence.Examined(&g.st.View, cursor)
		}
		return evs, nil
	}, done: func(err error) {
		g.abandoning = false
		if err == nil {
			g.presence.Examined(&g.st.View, g.st.AbandonScan)
		}
	}})
}
