package room

// StatsDepth is how many one-second samples a Stats ring keeps: the last
// 30 minutes, so a dashboard opened late still shows the history.
const StatsDepth = 30 * 60

// inflowWindow is the span, in seconds, over which the inflow of new
// visitors is measured.
const inflowWindow = 60

// Sample is a room's dashboard figures at one second.
type Sample struct {
	// T is the sample's time in Unix seconds.
	T       int64   `json:"t"`
	Waiting uint64  `json:"waiting"`
	Serving uint64  `json:"serving"`
	Issued  uint64  `json:"issued"`
	Rate    float64 `json:"rate"`
	// Inflow is new visitors (joins) per minute over the last 60 s.
	Inflow float64 `json:"inflow"`
}

// Stats is a ring of a room's samples, one per second, StatsDepth deep. It
// is pure (time passed in) and not safe for concurrent use: the room grain
// owns it, records a sample once a second and answers the dashboards' reads
// from it. It is not in the log: a new activation starts with an empty
// ring.
type Stats struct {
	buf  []Sample
	head int // index of the oldest sample
	n    int
}

// NewStats returns an empty ring.
func NewStats() *Stats { return &Stats{buf: make([]Sample, StatsDepth)} }

// Len is how many samples the ring holds.
func (s *Stats) Len() int { return s.n }

func (s *Stats) at(i int) *Sample { return &s.buf[(s.head+i)%len(s.buf)] }

// Latest returns the newest sample; ok is false while the ring is empty.
func (s *Stats) Latest() (Sample, bool) {
	if s.n == 0 {
		return Sample{}, false
	}
	return *s.at(s.n - 1), true
}

// Record takes the sample of view v at now (Unix nanoseconds) and returns
// it. A second sample within the same second replaces the first, so the
// ring holds one sample per second whatever the caller's tick.
func (s *Stats) Record(v *View, now int64) Sample {
	t := now / 1e9
	sm := Sample{T: t, Waiting: v.Waiting(now), Serving: v.Serving(now), Issued: v.Issued, Rate: v.Config.RatePerMinute}
	sm.Inflow = s.inflow(t, v.Issued)
	if s.n > 0 && s.at(s.n-1).T >= t {
		*s.at(s.n - 1) = sm
		return sm
	}
	if s.n == len(s.buf) {
		s.head = (s.head + 1) % len(s.buf)
		s.n--
	}
	*s.at(s.n) = sm
	s.n++
	return sm
}

// inflow is the joins of the last inflowWindow seconds before t, issued
// being the count at t: the difference to the oldest sample in the window.
// Numbers are issued only by joins, so the difference counts joins alone.
func (s *Stats) inflow(t int64, issued uint64) float64 {
	var base *Sample
	for i := s.n - 1; i >= 0; i-- {
		sm := s.at(i)
		if t-sm.T > inflowWindow {
			break
		}
		base = sm
	}
	if base == nil || issued < base.Issued {
		return 0
	}
	return float64(issued - base.Issued)
}

// Since returns the samples newer than t (Unix seconds), oldest first, at
// most limit of them (the newest; limit ≤ 0 means all).
func (s *Stats) Since(t int64, limit int) []Sample {
	i := s.n
	for i > 0 && s.at(i-1).T > t {
		i--
	}
	if limit > 0 && s.n-i > limit {
		i = s.n - limit
	}
	out := make([]Sample, 0, s.n-i)
	for ; i < s.n; i++ {
		out = append(out, *s.at(i))
	}
	return out
}

// Figures are the live dashboard's figures of a room at one moment.
type Figures struct {
	Sample
	// State is not_queueing, queueing, paused, prequeue or drawn.
	State  string `json:"state"`
	Active bool   `json:"active"`
	// EstimatedWait is the wait, in whole seconds, of a visitor joining
	// now.
	EstimatedWait int `json:"estimatedWaitSeconds"`
	// Mode is the room's mode (mode.go).
	Mode string `json:"mode"`
}

// Room states as the dashboard shows them.
const (
	StateNotQueueing = "not_queueing"
	StateQueueing    = "queueing"
	StatePaused      = "paused"
	StatePreQueue    = "prequeue"
	StateDrawn       = "drawn"
)

// FiguresOf returns the figures of view v at now with its sample sm.
func FiguresOf(v *View, sm Sample, now int64) Figures {
	f := Figures{Sample: sm, Active: v.Config.Active, State: StateOf(v, now), Mode: v.EffectiveMode()}
	if v.Exists && !v.Deleted {
		f.EstimatedWait = v.StatusOf(v.Issued+1, now).EstimatedWait
	}
	return f
}

// StateOf names the room's state at now: paused when not active; prequeue
// before a scheduled opening; drawn after an opening whose pre-queue is
// still being admitted; otherwise queueing when anybody waits.
func StateOf(v *View, now int64) string {
	switch {
	case !v.Config.Active:
		return StatePaused
	case v.PreQueue():
		return StatePreQueue
	}
	if n := len(v.Draws); n > 0 {
		d := v.Draws[n-1]
		if d.To > d.From && v.ServingAt(now) < float64(d.To) {
			return StateDrawn
		}
	}
	if v.Waiting(now) > 0 {
		return StateQueueing
	}
	return StateNotQueueing
}
