package room_test

import (
	"errors"
	"fmt"
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

// manyCodes is a room with n bypass codes, "code-0" … "code-(n-1)", and n
// API keys, "key-0" … "key-(n-1)", added without an actor (no audit trail
// to trim on every event).
func manyCodes(tb testing.TB, n int) *grain {
	tb.Helper()
	g := newRoom(tb, baseConfig(), at(0), 10)
	for i := range n {
		evs, err := g.st.DecideAddCode(room.CodeAdded{ID: fmt.Sprintf("c%d", i), Label: "Guest", Hash: hash(fmt.Sprintf("code-%d", i))}, at(second), "")
		if err != nil {
			tb.Fatal(err)
		}
		g.must(evs)
		evs, err = g.st.DecideAddKey(fmt.Sprintf("k%d", i), "Shop", hash(fmt.Sprintf("key-%d", i)), at(second), "")
		if err != nil {
			tb.Fatal(err)
		}
		g.must(evs)
	}
	return g
}

// With 10,000 codes and keys each is found by its hash, and an unknown,
// removed or disabled one is the same ErrNoCode; the lookups hold after a
// removal, and after a recovery from a snapshot plus the events after it.
func TestLookupManyCodes(t *testing.T) {
	const n = 10_000
	g := manyCodes(t, n)
	check := func(g *grain, gone map[int]bool) {
		t.Helper()
		for i := 0; i < n; i += 97 {
			err := redeem(t, g, fmt.Sprintf("code-%d", i), at(minute))
			k, ok := g.st.KeyByHash(hash(fmt.Sprintf("key-%d", i)))
			if gone[i] {
				if !errors.Is(err, room.ErrNoCode) || ok {
					t.Fatalf("removed code and key %d: redeem %v, key found %v", i, err, ok)
				}
				continue
			}
			if err != nil || !ok || k.ID != fmt.Sprintf("k%d", i) {
				t.Fatalf("code and key %d: redeem %v, key %v %v", i, err, k, ok)
			}
		}
		if err := redeem(t, g, "code-unknown", at(minute)); !errors.Is(err, room.ErrNoCode) {
			t.Fatalf("unknown code: %v, want ErrNoCode", err)
		}
		if _, ok := g.st.KeyByHash(hash("key-unknown")); ok {
			t.Fatal("unknown key found")
		}
	}
	check(g, nil)
	do := func(evs []room.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		g.must(evs)
	}

	gone := map[int]bool{97: true, 194: true}
	for i := range gone {
		do(g.st.DecideRemoveCode(fmt.Sprintf("c%d", i), at(2*second), "admin"))
		do(g.st.DecideRemoveKey(fmt.Sprintf("k%d", i), at(2*second), "admin"))
	}
	do(g.st.DecideChangeCode("c0", true, at(2*second), "admin"))
	if err := redeem(t, g, "code-0", at(minute)); !errors.Is(err, room.ErrNoCode) {
		t.Fatalf("disabled code: %v, want ErrNoCode", err)
	}
	do(g.st.DecideChangeCode("c0", false, at(3*second), "admin"))
	check(g, gone)

	// A snapshot, then a code and a key added and one of each removed
	// after it: the recovered room finds what the log says.
	g.snapshot()
	do(g.st.DecideAddCode(room.CodeAdded{ID: "late", Label: "Late", Hash: hash("code-late")}, at(4*second), "admin"))
	do(g.st.DecideRemoveCode("c291", at(4*second), "admin"))
	do(g.st.DecideRemoveKey("k291", at(4*second), "admin"))
	r := g.crash(at(5 * second))
	gone[291] = true
	check(r, gone)
	if err := redeem(t, r, "code-late", at(minute)); err != nil {
		t.Fatalf("code added after the snapshot: %v", err)
	}
}
