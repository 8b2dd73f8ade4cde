package room_test

import (
	"errors"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func hash(s string) []byte { return []byte("h:" + s) }

// codeRoom is a room with the codes open, limited, expiring, disabled and
// removed.
func codeRoom(t *testing.T) *grain {
	t.Helper()
	g := newRoom(t, baseConfig(), at(0), 10)
	three := 3
	for _, c := range []room.CodeAdded{
		{ID: "c1", Label: "Press", Hash: hash("open")},
		{ID: "c2", Label: "Fan club", Hash: hash("limited"), UsageLimit: &three},
		{ID: "c3", Label: "Partner", Hash: hash("expiring"), ExpiresAt: timeAt(hour)},
		{ID: "c4", Label: "Old", Hash: hash("disabled")},
		{ID: "c5", Label: "Gone", Hash: hash("removed")},
	} {
		evs, err := g.st.DecideAddCode(c, at(second), "admin")
		if err != nil {
			t.Fatal(err)
		}
		g.must(evs)
	}
	evs, err := g.st.DecideChangeCode("c4", true, at(2*second), "admin")
	if err != nil {
		t.Fatal(err)
	}
	g.must(evs)
	evs, err = g.st.DecideRemoveCode("c5", at(2*second), "admin")
	if err != nil {
		t.Fatal(err)
	}
	g.must(evs)
	return g
}

func redeem(t *testing.T, g *grain, code string, now int64) error {
	t.Helper()
	evs, c, err := g.st.DecideRedeem(hash(code), now)
	if err != nil {
		if evs != nil || c != nil {
			t.Fatalf("refused %q but got %d events and code %v", code, len(evs), c)
		}
		return err
	}
	if len(evs) != 1 || evs[0].Type != room.TypeCodeRedeemed || c == nil || evs[0].CodeRedeemed.ID != c.ID {
		t.Fatalf("redeem %q: got %+v and %v", code, evs, c)
	}
	g.must(evs)
	return nil
}

// Every code that does not work answers the same ErrNoCode: no oracle.
func TestRedeemRefusedAlike(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  string
		now   int64
		setup func(t *testing.T, g *grain)
	}{
		{"unknown", "nope", at(minute), nil},
		{"empty", "", at(minute), nil},
		{"disabled", "disabled", at(minute), nil},
		{"removed", "removed", at(minute), nil},
		{"expired", "expiring", at(hour), nil},
		{"long expired", "expiring", at(48 * hour), nil},
		{"exhausted", "limited", at(minute), func(t *testing.T, g *grain) {
			for range 3 {
				if err := redeem(t, g, "limited", at(30*second)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"room paused", "open", at(minute), func(t *testing.T, g *grain) {
			cfg := g.st.Config
			cfg.Active = false
			g.configure(cfg, at(30*second))
		}},
		{"room deleted", "open", at(minute), func(t *testing.T, g *grain) {
			evs, err := g.st.DecideDelete(at(30*second), "admin")
			if err != nil {
				t.Fatal(err)
			}
			g.must(evs)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := codeRoom(t)
			if tc.setup != nil {
				tc.setup(t, g)
			}
			err := redeem(t, g, tc.code, tc.now)
			if err != room.ErrNoCode {
				t.Fatalf("got %v, want ErrNoCode itself", err)
			}
		})
	}
	t.Run("working codes work", func(t *testing.T) {
		g := codeRoom(t)
		for _, c := range []string{"open", "limited", "expiring"} {
			if err := redeem(t, g, c, at(hour-1)); err != nil {
				t.Fatalf("redeem %q: %v", c, err)
			}
		}
		evs, err := g.st.DecideChangeCode("c4", false, at(hour), "admin")
		if err != nil {
			t.Fatal(err)
		}
		g.must(evs)
		if err := redeem(t, g, "disabled", at(hour)); err != nil {
			t.Fatalf("re-enabled code: %v", err)
		}
	})
}

// The usage limit is never exceeded, however often a code is tried, and the
// count survives replay.
func TestRedeemUsageLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 3, 10} {
		g := newRoom(t, baseConfig(), at(0), 10)
		evs, err := g.st.DecideAddCode(room.CodeAdded{ID: "c", Label: "L", Hash: hash("x"), UsageLimit: &limit}, at(0), "admin")
		if err != nil {
			t.Fatal(err)
		}
		g.must(evs)
		ok := 0
		for i := range 3 * limit {
			if err := redeem(t, g, "x", at(int64(i)*second)); err == nil {
				ok++
			} else if err != room.ErrNoCode {
				t.Fatal(err)
			}
			if i == limit/2 {
				g = g.crash(at(int64(i)*second + ms))
			}
		}
		if ok != limit || g.st.Codes["c"].Uses != limit {
			t.Fatalf("limit %d: got %d redemptions, %d uses", limit, ok, g.st.Codes["c"].Uses)
		}
		g = g.crash(at(hour))
		if u := g.st.Codes["c"].Uses; u != limit {
			t.Fatalf("uses after replay: got %d, want %d", u, limit)
		}
		if err := redeem(t, g, "x", at(hour)); err != room.ErrNoCode {
			t.Fatalf("exhausted code after replay: got %v, want ErrNoCode", err)
		}
	}
}

func TestRedeemUsesSurviveReplay(t *testing.T) {
	g := codeRoom(t)
	for i := range 7 {
		if err := redeem(t, g, "open", at(minute+int64(i)*second)); err != nil {
			t.Fatal(err)
		}
	}
	g.snapshot()
	for i := range 5 {
		if err := redeem(t, g, "open", at(2*minute+int64(i)*second)); err != nil {
			t.Fatal(err)
		}
	}
	r := g.crash(at(3 * minute))
	if u := r.st.Codes["c1"].Uses; u != 12 {
		t.Fatalf("uses after snapshot and replay: got %d, want 12", u)
	}
	// A full replay, without the snapshot, counts the same.
	r.log.snap, r.log.snapOff = nil, -1
	if u := r.crash(at(4 * minute)).st.Codes["c1"].Uses; u != 12 {
		t.Fatalf("uses after full replay: got %d, want 12", u)
	}
}

func TestAddCodeValidation(t *testing.T) {
	zero, long := 0, ""
	for range 101 {
		long += "é"
	}
	hundred := long[:200] // 100 two-byte characters
	for _, tc := range []struct {
		name  string
		code  room.CodeAdded
		field string
	}{
		{"no label", room.CodeAdded{ID: "c", Hash: hash("a")}, "label"},
		{"label of 101", room.CodeAdded{ID: "c", Label: long, Hash: hash("a")}, "label"},
		{"label of 100 non-ASCII characters", room.CodeAdded{ID: "c", Label: hundred, Hash: hash("a")}, ""},
		{"usage limit 0", room.CodeAdded{ID: "c", Label: "L", Hash: hash("a"), UsageLimit: &zero}, "usageLimit"},
		{"expired already", room.CodeAdded{ID: "c", Label: "L", Hash: hash("a"), ExpiresAt: timeAt(0)}, "expiresAt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRoom(t, baseConfig(), at(0), 10)
			evs, err := g.st.DecideAddCode(tc.code, at(0), "admin")
			var fe *room.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("got %v, want valid", err)
			case tc.field == "":
				if len(evs) != 1 {
					t.Fatalf("got %d events, want 1", len(evs))
				}
			case !errors.As(err, &fe) || fe.Field != tc.field || evs != nil:
				t.Fatalf("got %v and %d events, want a %s error", err, len(evs), tc.field)
			}
		})
	}
	if _, err := room.New("r1").DecideAddCode(room.CodeAdded{ID: "c", Label: "L"}, at(0), "admin"); err != room.ErrNotFound {
		t.Fatalf("code for a room that does not exist: got %v, want ErrNotFound", err)
	}
	g := newRoom(t, baseConfig(), at(0), 10)
	if _, err := g.st.DecideChangeCode("missing", true, at(0), "admin"); err != room.ErrNoItem {
		t.Fatalf("change missing code: got %v, want ErrNoItem", err)
	}
	if _, err := g.st.DecideRemoveCode("missing", at(0), "admin"); err != room.ErrNoItem {
		t.Fatalf("remove missing code: got %v, want ErrNoItem", err)
	}
}
