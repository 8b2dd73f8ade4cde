package room_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

var update = flag.Bool("update", false, "rewrite testdata/events.golden from the current encoding")

const goldenPath = "testdata/events.golden"

// goldenEvents is one event of every type, every field set, as the log
// holds them. Adding a type means adding it here and to allTypes.
func goldenEvents() []room.Event {
	opens := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	expires := time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)
	limit := 50
	cfg := room.Config{
		Slug: "winter-sale", Name: "Winter sale", TargetURL: "https://shop.example/sale",
		Domains: []string{"shop.example", "*.shop.example"}, RatePerMinute: 600, Active: true,
		Message: "Tickets go on sale at six.\nPlease keep this page open.", HeaderImageURL: "https://cdn.example/header.png",
		AccentColor: "#0a63c9", TokenTTLSeconds: 600, BurstSeconds: 5, Pow: room.Pow{Enabled: true, Bits: 15, Auto: true, AutoFactor: 4},
		OpensAt: &opens, Abandon: room.Abandon{Enabled: true, GraceSeconds: 180}, AllowBareNumber: true,
		AutoRate: room.AutoRate{Enabled: true, HealthURL: "https://shop.example/health", MinRate: 60, MaxRate: 6000,
			IntervalSeconds: 10, RaisePercent: 5, CutPercent: 25, MaxFailures: 3, Rules: []room.Rule{{Metric: "responseTimeMs", Op: ">", Value: 800}, {Metric: "db.connections", Op: "<", Value: 90}}},
		AddressBudget: room.AddressBudget{PerMinute: 30, Burst: 60},
	}
	at := t0
	line := &room.Line{Base: 1234.5, T0: at, Rate: 600}
	h := func(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
	chain := &room.Chain{Hash: h(1), PublicKey: h(2), Scheme: "bls-unchained-g1-rfc9380", GenesisTime: 1692803367,
		PeriodSeconds: 3, GenesisSeed: h(3), BeaconID: "quicknet"}
	commit := &room.Commitment{Hash: h(4), Algorithm: room.DrawAlgorithm, Version: room.DrawVersion, Slug: "winter-sale",
		ClosesAt: opens.UnixMilli(), KeyHash: h(5), Chain: chain, Round: 123456, Previous: [][]byte{h(6)}, At: at}
	return []room.Event{
		{Type: room.TypeActivated, At: at, Activated: &room.Activated{Nonce: "3f2a9c0d1e4b5a67"}},
		{Type: room.TypeCreated, At: at, Actor: "admin", Line: &room.Line{Base: 0, T0: at, Rate: 0},
			Created: &room.Created{Config: cfg, SecretSealed: []byte("sealed secret"), TicketKeySealed: []byte("sealed ticket key"),
				Commit: commit, DrawKeySealed: []byte("sealed draw key")}},
		{Type: room.TypeReserved, Epoch: 7, At: at, Line: line, Reserved: &room.Reserved{UpTo: 4096}},
		{Type: room.TypeCheckpoint, Epoch: 7, At: at, Line: line, Checkpoint: &room.Checkpoint{Issued: 4000, Final: true}},
		{Type: room.TypeConfigured, Epoch: 7, At: at, Actor: "key:runbook", Line: line,
			Configured: &room.Configured{Config: withEvents(cfg), Phase: room.Phase{Event: 2, Stage: room.StagePrequeue}, Arm: &room.Arm{From: 4000, Commit: commit, Closed: &room.Closed{To: 4100, At: at}},
				Disarm: true, DrawKeySealed: []byte("sealed draw key"), Recommit: commit}},
		{Type: room.TypeSecretRotated, Epoch: 7, At: at, Actor: "admin", SecretRotated: &room.SecretRotated{SecretSealed: []byte("new sealed secret")}},
		{Type: room.TypeKeyAdded, Epoch: 7, At: at, Actor: "admin", KeyAdded: &room.KeyAdded{ID: "kabc", Name: "runbook", Hash: []byte("key hash")}},
		{Type: room.TypeKeyRemoved, Epoch: 7, At: at, Actor: "admin", KeyRemoved: &room.ItemRemoved{ID: "kabc"}},
		{Type: room.TypeCodeAdded, Epoch: 7, At: at, Actor: "admin",
			CodeAdded: &room.CodeAdded{ID: "cdef", Label: "Press", Hash: []byte("code hash"), UsageLimit: &limit, ExpiresAt: &expires}},
		{Type: room.TypeCodeChanged, Epoch: 7, At: at, Actor: "admin", CodeChanged: &room.CodeChanged{ID: "cdef", Disabled: true}},
		{Type: room.TypeCodeRemoved, Epoch: 7, At: at, Actor: "admin", CodeRemoved: &room.ItemRemoved{ID: "cdef"}},
		{Type: room.TypeCodeRedeemed, Epoch: 7, At: at, CodeRedeemed: &room.CodeRedeemed{ID: "cdef"}},
		{Type: room.TypeDrawClosed, Epoch: 7, At: at, DrawClosed: &room.Closed{To: 9000, At: at}},
		{Type: room.TypeDrawn, Epoch: 7, At: at, Line: line, Drawn: &room.Draw{From: 4000, To: 9000, Key: h(7), At: at,
			Version: room.DrawVersion, Seed: h(8), Commit: commit, ClosedAt: at, BeaconMissing: "beacon unreachable",
			Beacon: &room.BeaconRound{Round: 123456, Randomness: h(9), Signature: h(10), PreviousSignature: h(11)}}},
		{Type: room.TypeAbandoned, Epoch: 7, At: at, Abandoned: &room.Abandoned{Count: 12, Cursor: 5000}},
		{Type: room.TypeRateAdjusted, Epoch: 7, At: at, Actor: room.ActorAutoRate, Line: line,
			RateAdjusted: &room.RateChange{At: time.Unix(0, at).UTC(), From: 800, To: 600, Rule: "responseMs < 500",
				Reason: "responseMs is 812: cut by 25%", Observed: map[string]float64{"responseMs": 812, "status": 200}, Failures: 0,
				Pow: &room.PowLevel{Bits: 16}}},
		{Type: room.TypeHealthTested, Epoch: 7, At: at, Actor: "admin", HealthTested: &room.HealthTested{URL: "https://shop.example/health"}},
		{Type: room.TypeRestored, Epoch: 7, At: at, Line: line,
			Restored: &room.Restored{Jump: room.Jump{From: 9000, To: 600009000}, TakenAt: at - int64(10*time.Minute)}},
		{Type: room.TypeReturned, Epoch: 7, At: at, Returned: &room.Returned{Number: 9500, As: 600009001}},
		{Type: room.TypeDeleted, Epoch: 7, At: at, Actor: "admin", Deleted: &struct{}{}},
	}
}

// withEvents is cfg with two events, every field of them set.
func withEvents(cfg room.Config) room.Config {
	msg := "The main sale."
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	pre := start.Add(-30 * time.Minute)
	cfg.Events = []room.Period{
		{Name: "Fan club", StartsAt: start.Add(-time.Hour), EndsAt: pre, RatePerMinute: 300, Mode: room.ModeQueue},
		{Name: "Main sale", StartsAt: start, EndsAt: start.Add(8 * time.Hour), PrequeueFrom: &pre, RatePerMinute: 2000,
			Mode: room.ModeQueue, Message: &msg, Pow: &room.Pow{Enabled: true, Bits: 12, AutoFactor: 4},
			AutoRate: &room.RateBounds{MinRate: 500, MaxRate: 3000}, EndMode: room.ModeSoldOut},
	}
	return cfg
}

var allTypes = []string{
	room.TypeActivated, room.TypeCreated, room.TypeReserved, room.TypeCheckpoint, room.TypeConfigured,
	room.TypeSecretRotated, room.TypeKeyAdded, room.TypeKeyRemoved, room.TypeCodeAdded, room.TypeCodeChanged,
	room.TypeCodeRemoved, room.TypeCodeRedeemed, room.TypeDrawn, room.TypeAbandoned, room.TypeDeleted,
	room.TypeRateAdjusted, room.TypeHealthTested, room.TypeDrawClosed, room.TypeRestored, room.TypeReturned,
}

// TestGoldenEvents fails on any change of the event encoding: what stands in
// existing logs must keep its meaning. An intended change needs a new
// EventVersion and `go test ./actors/room -run Golden -update`.
func TestGoldenEvents(t *testing.T) {
	evs := goldenEvents()
	var buf bytes.Buffer
	for i := range evs {
		b, err := evs[i].Encode()
		if err != nil {
			t.Fatalf("encode %s: %v", evs[i].Type, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	gotLines, wantLines := strings.Split(buf.String(), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gotLines) || i < len(wantLines); i++ {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Errorf("line %d of %s:\ngot  %s\nwant %s", i+1, goldenPath, g, w)
		}
	}
	// What the log holds decodes to the same events: old records keep
	// their meaning for the decoder too.
	for i, line := range wantLines {
		if line == "" {
			continue
		}
		e, err := room.DecodeEvent([]byte(line))
		if err != nil {
			t.Fatalf("decode line %d: %v", i+1, err)
		}
		if i < len(evs) && !reflect.DeepEqual(e, evs[i]) {
			t.Errorf("line %d decodes to\n%+v\nwant\n%+v", i+1, e, evs[i])
		}
	}
}

// The golden file covers every type, each event with the payload of its
// type and no other.
func TestGoldenCoversEveryType(t *testing.T) {
	payloads := func(e room.Event) []string {
		var set []string
		v, ty := reflect.ValueOf(e), reflect.TypeOf(e)
		for i := range ty.NumField() {
			f := ty.Field(i)
			if f.Name == "Line" || f.Type.Kind() != reflect.Pointer {
				continue
			}
			if !v.Field(i).IsNil() {
				set = append(set, strings.Split(f.Tag.Get("json"), ",")[0])
			}
		}
		return set
	}
	seen := map[string]bool{}
	for _, e := range goldenEvents() {
		if seen[e.Type] {
			t.Errorf("type %s twice", e.Type)
		}
		seen[e.Type] = true
		if p := payloads(e); len(p) != 1 || p[0] != e.Type {
			t.Errorf("event %s carries payloads %v, want only %q", e.Type, p, e.Type)
		}
	}
	for _, ty := range allTypes {
		if !seen[ty] {
			t.Errorf("no golden event of type %s", ty)
		}
	}
}

func TestDecodeEventRefuses(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"no version", `{"type":"reserved","at":1,"reserved":{"upTo":5}}`},
		{"version 0", `{"v":0,"type":"reserved","at":1}`},
		{"future version", `{"v":2,"type":"reserved","at":1}`},
		{"not JSON", `reserved 5`},
		{"empty", ``},
		{"wrong field type", `{"v":1,"type":"reserved","reserved":{"upTo":"five"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if e, err := room.DecodeEvent([]byte(tc.data)); err == nil {
				t.Fatalf("decoded %+v, want an error", e)
			}
		})
	}
}

// What the Decide… methods write survives encoding: a replay of the
// decoded log rebuilds the configuration, the draw and the line.
func TestDecodedEventsApplyAlike(t *testing.T) {
	a := newRoom(t, baseConfig(), at(0), 16)
	for i := range 100 {
		a.mustJoin(at(int64(i) * ms))
	}
	cfg := baseConfig()
	cfg.RatePerMinute = 60
	cfg.OpensAt = timeAt(hour)
	a.configure(cfg, at(second))
	a.must(a.open(at(hour)))
	r := a.crash(at(hour))
	if !reflect.DeepEqual(r.st.Draws, a.st.Draws) || r.st.Config.RatePerMinute != 60 || r.st.Line != a.st.Line {
		t.Fatalf("after replay: got draws %+v rate %v line %+v, want %+v 60 %+v", r.st.Draws, r.st.Config.RatePerMinute, r.st.Line, a.st.Draws, a.st.Line)
	}
}
