package room_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func clock(d int64) time.Time { return time.Unix(0, at(d)).UTC() }

func strp(s string) *string { return &s }

// saleDay is the on-sale day of one room configured ahead: the fan-club
// pre-sale from 09:00 at 300 a minute, the main sale at 10:00 at 2,000 a
// minute with a pre-queue (and draw) from 09:30, sold out from 18:00.
func saleDay() room.Config {
	c := baseConfig()
	c.RatePerMinute = 100
	c.Message = "Welcome."
	pre := *timeAt(30 * minute)
	c.Events = []room.Period{
		{Name: "Fan club", StartsAt: clock(0), EndsAt: clock(30 * minute), RatePerMinute: 300, Message: strp("Fan-club pre-sale.")},
		{Name: "Main sale", StartsAt: clock(hour), EndsAt: clock(9 * hour), PrequeueFrom: &pre, RatePerMinute: 2000,
			Pow: &room.Pow{Enabled: true, Bits: 12}, EndMode: room.ModeSoldOut},
	}
	return c
}

func TestPhaseAt(t *testing.T) {
	c := saleDay()
	for _, tc := range []struct {
		name string
		at   int64
		want room.Phase
	}{
		{"before the day", -hour, room.Phase{}},
		{"pre-sale starts", 0, room.Phase{Event: 1, Stage: room.StageLive}},
		{"pre-sale last instant", 30*minute - 1, room.Phase{Event: 1, Stage: room.StageLive}},
		{"pre-queue of the main sale", 30 * minute, room.Phase{Event: 2, Stage: room.StagePrequeue}},
		{"main sale opens", hour, room.Phase{Event: 2, Stage: room.StageLive}},
		{"main sale last instant", 9*hour - 1, room.Phase{Event: 2, Stage: room.StageLive}},
		{"sold out at the end", 9 * hour, room.Phase{Event: 2, Stage: room.StageAfter}},
		{"sold out the next day", 30 * hour, room.Phase{Event: 2, Stage: room.StageAfter}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := room.PhaseAt(&c, clock(tc.at)); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	// An event without an end mode gives the room its own settings back.
	c.Events[1].EndMode = ""
	if got := room.PhaseAt(&c, clock(10*hour)); got != (room.Phase{}) {
		t.Fatalf("after an event without endMode: got %+v, want the room's own settings", got)
	}
}

func TestEffectiveSettings(t *testing.T) {
	c := saleDay()
	c.Normalize()
	for _, tc := range []struct {
		name    string
		at      int64
		mode    string
		rate    float64
		message string
		pow     bool
		opens   *time.Time
	}{
		{"own settings", -hour, room.ModeQueue, 100, "Welcome.", false, nil},
		{"pre-sale", 10 * minute, room.ModeQueue, 300, "Fan-club pre-sale.", false, nil},
		{"pre-queue", 45 * minute, room.ModeQueue, 2000, "Welcome.", true, timeAt(hour)},
		{"main sale", 2 * hour, room.ModeQueue, 2000, "Welcome.", true, timeAt(hour)},
		{"sold out", 9 * hour, room.ModeSoldOut, 100, "Welcome.", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := c.Effective(room.PhaseAt(&c, clock(tc.at)))
			if e.Mode != tc.mode || e.RatePerMinute != tc.rate || e.Message != tc.message || e.Pow.Enabled != tc.pow {
				t.Fatalf("got mode %s rate %v message %q pow %v, want %s %v %q %v", e.Mode, e.RatePerMinute, e.Message, e.Pow.Enabled,
					tc.mode, tc.rate, tc.message, tc.pow)
			}
			if (e.OpensAt == nil) != (tc.opens == nil) || (e.OpensAt != nil && !e.OpensAt.Equal(*tc.opens)) {
				t.Fatalf("opensAt: got %v, want %v", e.OpensAt, tc.opens)
			}
		})
	}
}

func TestPreview(t *testing.T) {
	c := saleDay()
	c.Normalize()
	p := room.Preview(&c, clock(45*minute))
	if p.Event == nil || *p.Event != 1 || p.EventName != "Main sale" || p.Stage != room.StagePrequeue || !p.PreQueue ||
		p.OpensAt == nil || !p.OpensAt.Equal(clock(hour)) || p.NextChange == nil || !p.NextChange.Equal(clock(hour)) ||
		p.RatePerMinute != 2000 || !p.Pow.Enabled || p.Pow.Bits != 12 {
		t.Fatalf("preview in the pre-queue: got %+v", p)
	}
	p = room.Preview(&c, clock(-hour))
	if p.Event != nil || p.Stage != "" || p.Mode != room.ModeQueue || p.NextChange == nil || !p.NextChange.Equal(clock(0)) {
		t.Fatalf("preview before the day: got %+v", p)
	}
	p = room.Preview(&c, clock(20*hour))
	if p.Mode != room.ModeSoldOut || p.NextChange != nil || p.Event == nil || *p.Event != 1 || p.Stage != room.StageAfter {
		t.Fatalf("preview after the day: got %+v", p)
	}
}

func TestEventsValidation(t *testing.T) {
	ev := func(from, to int64) room.Period { return room.Period{StartsAt: clock(from), EndsAt: clock(to)} }
	for _, tc := range []struct {
		name  string
		edit  func(c *room.Config)
		field string
	}{
		{"valid", func(c *room.Config) {}, ""},
		{"more than five", func(c *room.Config) {
			c.Events = nil
			for i := range int64(6) {
				c.Events = append(c.Events, ev(i*hour, i*hour+minute))
			}
		}, "events"},
		{"end before start", func(c *room.Config) { c.Events[1].EndsAt = clock(hour - minute) }, "events[1].endsAt"},
		{"end at start", func(c *room.Config) { c.Events[0].EndsAt = c.Events[0].StartsAt }, "events[0].endsAt"},
		{"no start", func(c *room.Config) { c.Events[0].StartsAt = time.Time{} }, "events[0].startsAt"},
		{"pre-queue after start", func(c *room.Config) { c.Events[1].PrequeueFrom = timeAt(2 * hour) }, "events[1].prequeueFrom"},
		{"overlap", func(c *room.Config) { c.Events[1].StartsAt = clock(20 * minute); c.Events[1].PrequeueFrom = nil }, "events[1].startsAt"},
		{"pre-queue overlaps", func(c *room.Config) { c.Events[1].PrequeueFrom = timeAt(20 * minute) }, "events[1].prequeueFrom"},
		{"overlap in any order", func(c *room.Config) {
			c.Events = []room.Period{ev(2*hour, 3*hour), ev(0, hour), ev(150*minute, 4*hour)}
		}, "events[2].startsAt"},
		{"bad rate", func(c *room.Config) { c.Events[0].RatePerMinute = -5 }, "events[0].ratePerMinute"},
		{"bad mode", func(c *room.Config) { c.Events[0].Mode = "open" }, "events[0].mode"},
		{"bad end mode", func(c *room.Config) { c.Events[1].EndMode = "closed" }, "events[1].endMode"},
		{"bad pow", func(c *room.Config) { c.Events[1].Pow.Bits = 40 }, "events[1].pow.bits"},
		{"bad bounds", func(c *room.Config) { c.Events[0].AutoRate = &room.RateBounds{MinRate: 500, MaxRate: 100} }, "events[0].autoRate.maxRate"},
		{"long message", func(c *room.Config) { c.Events[0].Message = strp(strings.Repeat("x", 2001)) }, "events[0].message"},
		{"opensAt beside events", func(c *room.Config) { c.OpensAt = timeAt(hour) }, "opensAt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := saleDay()
			tc.edit(&c)
			c.Normalize()
			err := c.Validate()
			var fe *room.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("got %v, want valid", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
				t.Fatalf("got %v, want an error for %s", err, tc.field)
			}
		})
	}
}
