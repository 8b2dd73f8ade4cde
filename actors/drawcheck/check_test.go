package drawcheck_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/drawcheck"
	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestRoomURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://q.example.com/queue/sale", "https://q.example.com/queue/sale"},
		{"https://q.example.com/queue/sale/", "https://q.example.com/queue/sale"},
		{"https://q.example.com/queue/sale/draw", "https://q.example.com/queue/sale"},
		{"http://127.0.0.1:8080/queue/sale/info?x=1#y", "http://127.0.0.1:8080/queue/sale"},
		{"https://q.example.com/prefix/queue/sale?ticket=T", "https://q.example.com/prefix/queue/sale"},
		{"https://q.example.com/sale", ""},
		{"https://q.example.com/queue/", ""},
		{"ftp://q.example.com/queue/sale", ""},
		{"not a url", ""},
	} {
		got, err := drawcheck.RoomURL(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("RoomURL(%q): got %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

// A draw made by the room's rules without a beacon checks, with a note that
// the order rests on the key alone; its positions are the room's.
func TestCheckWithoutBeacon(t *testing.T) {
	opens := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	key := bytes.Repeat([]byte{9}, room.DrawKeySize)
	st := room.New("r")
	evs, err := st.DecideCreate(room.Config{Slug: "xmas", Name: "Xmas", RatePerMinute: 60, Active: true, OpensAt: &opens},
		nil, nil, opens.Add(-time.Hour).UnixNano(), "admin", room.DrawKey{Key: key, Sealed: []byte("s")})
	if err != nil {
		t.Fatal(err)
	}
	st.Apply(0, evs[0])
	st.Issued = 1000
	evs, err = st.DecideDraw(opens.UnixNano(), room.DrawInput{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	st.Apply(0, evs[0])
	rev, ok := st.Draws[0].Reveal()
	if !ok {
		t.Fatal("no reveal")
	}
	pub := st.Draws[0].Commit.Public()
	rep, d := drawcheck.Check(&rev, &pub)
	if !rep.OK() || d == nil {
		t.Fatalf("got %+v", rep)
	}
	noted := false
	for _, s := range rep.Steps {
		noted = noted || (s.Name == "beacon" && s.Note)
	}
	if !noted {
		t.Fatalf("no note that the order rests on the key alone: %+v", rep.Steps)
	}
	if err := d.Bijection(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint64{1, 500, 1000} {
		if p, err := d.Position(n); err != nil || p != st.Draws[0].Position(n) {
			t.Fatalf("position of %d: got %d %v, want %d", n, p, err, st.Draws[0].Position(n))
		}
	}
	if _, err := d.Position(1001); err == nil {
		t.Fatal("a number outside the draw got a position")
	}
}
