package grain

import (
	"time"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

// statsInterval is how often a room grain samples its dashboard figures.
const statsInterval = time.Second

// maxAdjustments is how many rate changes a dashboard frame carries.
const maxAdjustments = 50

// roomStats is the grain's part of the live dashboard: the ring of samples
// and the figures of the last one. The grain samples once a second and
// answers the front nodes' reads from it; nothing here touches the log.
type roomStats struct {
	ring    *room.Stats
	figures room.Figures
	at      time.Time
	slug    string
}

// record samples the room when a second has passed since the last sample,
// and sets the room's gauges. Rooms that do not exist keep no ring.
func (s *roomStats) record(v *room.View, now time.Time, m *Metrics) {
	if now.Sub(s.at) < statsInterval {
		return
	}
	if !v.Exists || v.Deleted {
		// Not stamped: a room created now is sampled at the next tick,
		// so its first joins count in the inflow.
		s.forget(m)
		return
	}
	s.at = now
	if s.ring == nil {
		s.ring = room.NewStats()
	}
	t := now.UnixNano()
	sm := s.ring.Record(v, t)
	s.figures = room.FiguresOf(v, sm, t)
	if m == nil || m.Rooms == nil {
		return
	}
	if v.Config.Test {
		// Test rooms stay out of the production figures.
		if s.slug != "" {
			m.Rooms.Delete(s.slug)
			s.slug = ""
		}
		return
	}
	s.slug = v.Config.Slug
	m.Rooms.Set(s.slug, sm)
	m.Rooms.SetMode(s.slug, v.EffectiveMode())
}

// forget drops the ring and the room's gauges (room deleted, grain
// stopping: another member may take the room over).
func (s *roomStats) forget(m *Metrics) {
	s.ring = nil
	if m != nil && m.Rooms != nil && s.slug != "" {
		m.Rooms.Delete(s.slug)
		s.slug = ""
	}
}

// result answers a StatsRequest about the room in st.
func (s *roomStats) result(st *room.State, since int64) protocol.StatsResult {
	v := &st.View
	r := protocol.StatsResult{ID: v.ID, Slug: v.Config.Slug, Name: v.Config.Name, Test: v.Config.Test, Figures: s.figures,
		History: []room.Sample{}, Adjustments: adjustments(st)}
	a := v.Config.AutoRate
	r.AutoRate.Enabled, r.AutoRate.MinRate, r.AutoRate.MaxRate = a.Enabled, a.MinRate, a.MaxRate
	if s.ring != nil {
		r.History = s.ring.Since(since, room.StatsDepth)
	}
	return r
}

// adjustments returns the newest (up to maxAdjustments) changes of the
// self-regulating rate, oldest first, from the rate log in the room's
// state.
func adjustments(st *room.State) []protocol.Adjustment {
	log := st.RateLog(maxAdjustments)
	out := make([]protocol.Adjustment, len(log))
	for i, c := range log {
		out[i] = protocol.Adjustment{At: c.At, From: c.From, To: c.To, Rule: c.Rule, Reason: c.Reason}
	}
	return out
}

// answerStats routes a dashboard read to the ring.
func (g *roomGrain) answerStats(c *opCall, r *protocol.StatsRequest) {
	if !g.st.Exists || g.st.Deleted {
		c.respond(errResponse(room.ErrNotFound))
		return
	}
	if g.stats.ring == nil {
		g.stats.at = time.Time{}
		g.stats.record(&g.st.View, g.now(), g.deps.Metrics)
	}
	c.respond(okResponse(g.stats.result(g.st, r.Since)))
}
