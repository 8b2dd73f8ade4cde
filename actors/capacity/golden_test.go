package capacity

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"time"

	rate "github.com/aditus-queue/aditus-queue/actors/room"
)

var update = flag.Bool("update", false, "rewrite testdata/events.golden from the current encoding")

// TestGolden keeps the log encoding of every event type: a change of
// format fails here until the golden file is rewritten with -update.
func TestGolden(t *testing.T) {
	at := int64(1_780_000_000_000_000_000)
	evs := []Event{
		{Type: TypeConfigured, Epoch: 7, At: at, Settings: &Settings{Active: 500, Session: 5 * time.Minute, Refresh: 10 * time.Second}},
		{Type: TypeQueued, Epoch: 7, At: at, ID: "q7d2"},
		{Type: TypeQueued, Epoch: 7, At: at, ID: "p3k9", Arrived: at - int64(9*time.Second)},
		{Type: TypeAdmitted, Epoch: 7, At: at, ID: "q7d2", Until: at + int64(5*time.Minute)},
		{Type: TypeReleased, Epoch: 7, At: at, ID: "q7d2"},
		{Type: TypeKeyed, Epoch: 7, At: at, KeySealed: []byte("sealed cookie key")},
		{Type: TypeExpired, Epoch: 7, At: at, IDs: []string{"a1", "b2"}, Left: []string{"c3"}},
		{Type: TypeConfigured, Epoch: 7, At: at, Settings: &Settings{Active: 500, Session: 5 * time.Minute, Refresh: 10 * time.Second,
			Pow: PowAuto{PerMinute: 600, Bits: 14, MaxBits: 20}}},
		{Type: TypePow, Epoch: 7, At: at, Pow: &rate.PowLevel{Bits: 15}, Reason: "arrivals 1500 a minute passed pow_auto's 600 a minute: proof of work at 15 bits"},
		{Type: TypePow, Epoch: 7, At: at, Pow: &rate.PowLevel{}, Reason: "lifted"},
		{Type: TypeRestored, Epoch: 7, At: at, Held: 120, Until: at + int64(5*time.Minute)},
		{Type: TypeConfigured, Epoch: 7, At: at, Host: "shop.example.com", Name: "/", Settings: &Settings{Active: 500, Session: 5 * time.Minute,
			Refresh: 10 * time.Second, AddressBudget: rate.AddressBudget{PerMinute: 30, Burst: 60}}},
		{Type: TypeAdjusted, Epoch: 7, At: at, Actor: "admin", Runtime: &Runtime{Active: 800, Paused: true,
			Pow: &PowAuto{PerMinute: 900, Bits: 15}, AddressBudget: &rate.AddressBudget{PerMinute: 10, Burst: 20}, Version: 3}},
	}
	var buf bytes.Buffer
	for i := range evs {
		b, err := evs[i].Encode()
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		if _, err := DecodeEvent(b); err != nil {
			t.Fatalf("%s: %v", evs[i].Type, err)
		}
	}
	const path = "testdata/events.golden"
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("event encoding changed:\ngot  %s\nwant %s", buf.Bytes(), want)
	}
}
