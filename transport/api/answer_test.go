package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestAnswerEncodingMatchesEncodingJSON(t *testing.T) {
	yes, no := true, false
	pos := uint64(17)
	opens := time.Date(2026, 3, 1, 9, 30, 0, 123000000, time.UTC)
	for _, tc := range []struct {
		name       string
		slug, room string
		a          ticketAnswer
	}{
		{"status", "spring-sale", "Spring sale", ticketAnswer{Number: 1234, Serving: 1180, Ahead: 53, EstimatedWaitSeconds: 54, RetryAfterSeconds: 5, Active: &yes}},
		{"admitted, paused", "s", "S", ticketAnswer{Number: 1, Serving: 9, Admitted: true, RetryAfterSeconds: 1, Active: &no}},
		{"join", "s", "S", ticketAnswer{Number: 2, Serving: 1, Ticket: "AAAAAAAS1ofHHafik2OqhV1cY7Ft3quT", RetryAfterSeconds: 2}},
		{"pre-queue, drawn", "s", "S", ticketAnswer{Number: 40, Serving: 3, Active: &yes, OpensAt: &opens, Position: &pos}},
		{"extremes", "s", "S", ticketAnswer{Number: math.MaxUint64, Serving: math.MaxUint64, Ahead: math.MaxUint64,
			EstimatedWaitSeconds: math.MaxInt32, RetryAfterSeconds: -1}},
		{"names to escape", "a-b", "Sale <b>&amp;</b> \"quoted\" \\ \u2028 ünï 🎫 \x01", ticketAnswer{Number: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a
			a.Queue, a.Name = tc.slug, tc.room
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(a); err != nil {
				t.Fatal(err)
			}
			var p answerPrefixes
			v := &room.View{ID: "r1", Config: room.Config{Slug: tc.slug, Name: tc.room}}
			if got := appendAnswer(nil, p.of(v), &a); string(got) != want.String() {
				t.Errorf("got  %s\nwant %s", got, want.String())
			}
		})
	}
}

func TestAnswerPrefixFollowsTheView(t *testing.T) {
	var p answerPrefixes
	v1 := &room.View{ID: "r1", Config: room.Config{Slug: "s", Name: "Old"}}
	v2 := &room.View{ID: "r1", Config: room.Config{Slug: "s", Name: "New"}}
	if got := string(p.of(v1)); got != `{"queue":"s","name":"Old"` {
		t.Errorf("got %s", got)
	}
	if got := string(p.of(v2)); got != `{"queue":"s","name":"New"` {
		t.Errorf("after a new view: got %s", got)
	}
}

func TestPlainTicket(t *testing.T) {
	for _, tc := range []struct {
		t    string
		want bool
	}{{"", true}, {"AZaz09-_", true}, {`a"b`, false}, {"a<b", false}, {"a\\b", false}, {"ü", false}} {
		if got := plainTicket(tc.t); got != tc.want {
			t.Errorf("plainTicket(%q): got %v, want %v", tc.t, got, tc.want)
		}
	}
}

func TestQueryValueAsParseQuery(t *testing.T) {
	for _, raw := range []string{
		"", "ticket=abc", "number=5&ticket=abc", "ticket=a&ticket=b", "ticket=", "ticket", "x=1",
		"ticket=a%2Bb", "ticket=a+b", "tick%65t=x", "ticket=%zz&ticket=ok", "ticket=a;b&ticket=c",
		"&&ticket=abc&&", "number=%31%32", "number=1&number=2", "ticket=abc&pretty",
	} {
		want, _ := url.ParseQuery(raw)
		for _, key := range []string{"ticket", "number"} {
			if got := queryValue(raw, key); got != want.Get(key) {
				t.Errorf("queryValue(%q, %q): got %q, want %q", raw, key, got, want.Get(key))
			}
		}
	}
}

func FuzzQueryValue(f *testing.F) {
	for _, s := range []string{"ticket=abc", "number=5&ticket=a%2Bb", "ticket=%zz&ticket=ok;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		want, _ := url.ParseQuery(raw)
		if got := queryValue(raw, "ticket"); got != want.Get("ticket") {
			t.Errorf("queryValue(%q): got %q, want %q", raw, got, want.Get("ticket"))
		}
	})
}

// The cached prefix serves copies of a view (a join's answer carries one)
// without encoding again, and follows a rename.
func TestAnswerPrefixFollowsTheRoom(t *testing.T) {
	var p answerPrefixes
	v := &room.View{ID: "r1"}
	v.Config.Slug, v.Config.Name = "shop", `Big "sale"`
	first := p.of(v)
	if string(first) != `{"queue":"shop","name":"Big \"sale\""` {
		t.Fatalf("prefix %s", first)
	}
	copied := *v
	if again := p.of(&copied); &again[0] != &first[0] {
		t.Error("a copy of the view encoded the prefix again")
	}
	copied.Config.Name = "Renamed"
	if got := p.of(&copied); string(got) != `{"queue":"shop","name":"Renamed"` {
		t.Errorf("after a rename: %s", got)
	}
}
