package capacity

// rates counts a room's admissions, session expiries and provisional
// places over the last minute, in one bucket a second (60 buckets: a
// bounded ring, whatever the traffic). Not in the log: after a restart it
// counts the events replayed within the minute, then afresh.
type rates struct {
	buckets [60]rateBucket
}

type rateBucket struct {
	sec                            int64
	admitted, expired, provisional int
}

func (r *rates) add(at int64, admitted, expired, provisional int) {
	sec := at / 1e9
	b := &r.buckets[sec%60]
	if b.sec != sec {
		*b = rateBucket{sec: sec}
	}
	b.admitted += admitted
	b.expired += expired
	b.provisional += provisional
}

// sum returns the counts of the 60 seconds up to now, and the provisional
// places given within the last window seconds.
func (r *rates) sum(now int64, window int64) (admitted, expired, provisional int) {
	sec := now / 1e9
	for _, b := range r.buckets {
		if b.sec > sec-60 && b.sec <= sec {
			admitted += b.admitted
			expired += b.expired
		}
		if b.sec > sec-window && b.sec <= sec {
			provisional += b.provisional
		}
	}
	return admitted, expired, provisional
}

// Provisional records a provisional place given at now (a first request
// answered with an estimate: Arrive returned no place).
func (t *Table) Provisional(now int64) { t.minute.add(now, 0, 0, 1) }

// Figures are a room's gauges for the console and /metrics.
type Figures struct {
	Inside  int `json:"inside"`
	Waiting int `json:"waiting"`
	// Provisional is the provisional places given within the last
	// provisional window: first requests whose visitor may still come
	// back and take the place.
	Provisional int `json:"provisional"`
	// AdmittedPerMinute and ExpiredPerMinute count the last 60 seconds.
	AdmittedPerMinute int `json:"admittedPerMinute"`
	ExpiredPerMinute  int `json:"expiredPerMinute"`
	// Pow is the proof of work asked now, in bits, and PowReason why it
	// last changed.
	Pow       int    `json:"pow"`
	PowReason string `json:"powReason,omitempty"`
}

// Figures returns the room's gauges at now. It changes nothing.
func (t *Table) Figures(now int64) Figures {
	t.init()
	w := int64(t.Settings.ProvisionalWindow().Seconds()) + 1
	a, e, p := t.minute.sum(now, w)
	return Figures{Inside: len(t.Inside), Waiting: t.line.len(), Provisional: p, AdmittedPerMinute: a, ExpiredPerMinute: e,
		Pow: t.PowBits(), PowReason: t.PowReason}
}
