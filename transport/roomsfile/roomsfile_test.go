package roomsfile

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

const full = `
room "summer-sale" {
  name            = "Summer sale"
  rate_per_minute = 600
  target_url      = "https://shop.example/"
  domains         = ["Shop.Example.", "*.shop.example"]
  messages        = { de = "Bitte warten" }
  opens_at        = "2030-01-01T10:00:00+01:00"
  mode            = "queueAll"
  waiting_status  = 202

  pow {
    enabled = true
    bits    = 18
  }
  address_budget {
    per_minute = 120
  }
  auto_rate {
    min_rate = 10
    rule {
      metric = "responseMs"
      op     = "<"
      value  = 800
    }
    rule {
      metric = "status"
      op     = "<"
      value  = 500
    }
  }
  sold_out_message {
    en    = "Sold out"
    texts = { fr = "Épuisé" }
  }
}

room "plain" {
  name            = "Plain"
  rate_per_minute = 60
  active          = false
}
`

func TestParseFull(t *testing.T) {
	rooms, err := Parse([]byte(full), "rooms.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rooms) != 2 || rooms[0].Slug != "summer-sale" || rooms[1].Slug != "plain" {
		t.Fatalf("got %+v, want summer-sale then plain", rooms)
	}
	c := rooms[0].Config
	opens := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"slug", c.Slug, "summer-sale"},
		{"active by default", c.Active, true},
		{"domains normalised", strings.Join(c.Domains, ","), "shop.example,*.shop.example"},
		{"messages", c.Messages["de"], "Bitte warten"},
		{"opensAt in UTC", c.OpensAt.Equal(opens) && c.OpensAt.Location() == time.UTC, true},
		{"mode", c.Mode, "queueAll"},
		{"waitingStatus", c.WaitingStatus, 202},
		{"pow.bits", c.Pow.Bits, 18},
		{"budget set", c.AddressBudget.PerMinute, 120.0},
		{"budget default", c.AddressBudget.Burst, room.DefaultBudgetBurst},
		{"rules", len(c.AutoRate.Rules), 2},
		{"second rule", c.AutoRate.Rules[1], room.Rule{Metric: "status", Op: "<", Value: 500}},
		{"default ttl", c.TokenTTLSeconds, room.DefaultTokenTTLSeconds},
		{"texts", c.SoldOutMessage.Texts["fr"], "Épuisé"},
		{"paused room", rooms[1].Config.Active, false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// Every mistake is refused with the file and line before anything is sent.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown field", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n colour = \"red\"\n}", `f.hcl:4: unknown field "colour"`},
		{"unknown nested field", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n pow {\n  bitz = 9\n }\n}", `f.hcl:5: unknown field "bitz"`},
		{"slug as a field", "room \"a\" {\n slug = \"b\"\n}", `f.hcl:2: unknown field "slug"`},
		{"bad value", "room \"a\" {\n name = \"A\"\n rate_per_minute = 0\n}", `f.hcl:3: room "a": rate_per_minute: must be at least 1`},
		{"bad nested value", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n pow {\n  bits = 30\n }\n}", `f.hcl:5: room "a": pow.bits: must be 8–24`},
		{"bad list element", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n auto_rate {\n  rule {\n   metric = \"x\"\n   op = \"=\"\n   value = 1\n  }\n }\n}", `f.hcl:5: room "a": auto_rate.rule[0]: needs a metric`},
		{"missing name", "room \"a\" {\n rate_per_minute = 1\n}", `f.hcl:1: room "a": name: is required`},
		{"wrong type", "room \"a\" {\n name = \"A\"\n rate_per_minute = \"fast\"\n}", `f.hcl:3: rate_per_minute: must be a number`},
		{"fraction for a whole number", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n token_ttl_seconds = 60.5\n}", `f.hcl:4: token_ttl_seconds: must be a whole number`},
		{"bad time", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n opens_at = \"tomorrow\"\n}", `f.hcl:4: opens_at: "tomorrow" is not an RFC 3339 time`},
		{"block as argument", "room \"a\" {\n pow = 3\n}", `f.hcl:2: pow is a block`},
		{"argument as block", "room \"a\" {\n name {\n }\n}", `f.hcl:2: name is an argument`},
		{"two pow blocks", "room \"a\" {\n pow {\n }\n pow {\n }\n}", `f.hcl:4: only one pow block`},
		{"bad slug", "room \"Bad Slug\" {\n name = \"A\"\n rate_per_minute = 1\n}", `f.hcl:1: room "Bad Slug": slug:`},
		{"twice", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n}\nroom \"a\" {\n name = \"A\"\n rate_per_minute = 1\n}", `f.hcl:5: room "a" is declared twice (first at line 1)`},
		{"no label", "room {\n}", `f.hcl:1: a room block takes one label`},
		{"other block", "site \"a\" {\n}", `f.hcl:1: unknown block "site"`},
		{"top-level argument", "url = \"x\"\n", `f.hcl:1: "url": only room blocks`},
		{"function call", "room \"a\" {\n name = file(\"/etc/passwd\")\n}", `f.hcl:2: Function calls not allowed`},
		{"variable", "room \"a\" {\n name = env.HOME\n}", `f.hcl:2: Variables not allowed`},
		{"syntax", "room \"a\" {\n name = \n}", `f.hcl:2:`},
		{"list of numbers", "room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n domains = [1]\n}", `f.hcl:4: domains: every element must be a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "f.hcl")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseBounds(t *testing.T) {
	if _, err := Parse(bytes.Repeat([]byte(" "), MaxFileBytes+1), "big.hcl"); err == nil {
		t.Fatal("a file over the bound was read")
	}
	var b strings.Builder
	for i := range MaxRooms + 1 {
		b.WriteString("room \"r" + strconv.Itoa(i) + "\" {\n name = \"R\"\n rate_per_minute = 1\n}\n")
	}
	_, err := Parse([]byte(b.String()), "many.hcl")
	if err == nil || !strings.Contains(err.Error(), "more than 1000 rooms") {
		t.Fatalf("got %v, want a refusal of room 1001", err)
	}
}

func mustParse(t *testing.T, src string) []Room {
	t.Helper()
	rooms, err := Parse([]byte(src), "t.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return rooms
}

// site is a room as a node would answer it for the file's room r, with the
// settings the node fills in itself.
func site(id string, r Room) Site {
	return Site{ID: id, Version: `"v-` + id + `"`, Config: r.Config}
}

func TestDiff(t *testing.T) {
	a := mustParse(t, "room \"a\" {\n name = \"A\"\n rate_per_minute = 60\n}")[0]
	a2 := mustParse(t, "room \"a\" {\n name = \"A2\"\n rate_per_minute = 60\n pow {\n  enabled = true\n }\n}")[0]
	b := mustParse(t, "room \"b\" {\n name = \"B\"\n rate_per_minute = 5\n auto_rate {\n  rule {\n   metric = \"status\"\n   op = \"<\"\n   value = 500\n  }\n }\n}")[0]
	bNoRule := mustParse(t, "room \"b\" {\n name = \"B\"\n rate_per_minute = 5\n}")[0]
	type want struct {
		action Action
		slug   string
		fields string
	}
	for _, tc := range []struct {
		name    string
		file    []Room
		node    []Site
		destroy bool
		want    []want
	}{
		{"empty", nil, nil, false, nil},
		{"create shows what differs from the defaults", []Room{a}, nil, false,
			[]want{{Create, "a", "name=\"\"->\"A\" ratePerMinute=0->60"}}},
		{"same room: nothing", []Room{a}, []Site{site("ra", a)}, false, nil},
		{"change field by field", []Room{a2}, []Site{site("ra", a)}, false,
			[]want{{Change, "a", "name=\"A\"->\"A2\" pow.enabled=false->true"}}},
		{"a node's room without the file's defaults compares equal", []Room{a}, []Site{{ID: "ra", Version: `"1"`, Config: room.Config{Slug: "a", Name: "A", RatePerMinute: 60, Active: true}}}, false, nil},
		{"a removed list element", []Room{bNoRule}, []Site{site("rb", b)}, false,
			[]want{{Change, "b", "autoRate.rules[0].metric=\"status\"-> autoRate.rules[0].op=\"<\"-> autoRate.rules[0].value=500->"}}},
		{"not in the file: kept", []Room{a}, []Site{site("ra", a), site("rb", b)}, false,
			[]want{{Keep, "b", ""}}},
		{"not in the file, -destroy: deleted", []Room{a}, []Site{site("rb", b), site("ra", a)}, true,
			[]want{{Delete, "b", ""}}},
		{"the file's order, then the node's by slug", []Room{b, a}, []Site{site("rz", Room{Config: room.Config{Slug: "z"}}), site("ry", Room{Config: room.Config{Slug: "y"}})}, false,
			[]want{{Create, "b", "*"}, {Create, "a", "*"}, {Keep, "y", ""}, {Keep, "z", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Diff(tc.file, tc.node, tc.destroy)
			if len(p.Steps) != len(tc.want) {
				t.Fatalf("got %d steps %+v, want %d", len(p.Steps), p.Steps, len(tc.want))
			}
			for i, w := range tc.want {
				s := p.Steps[i]
				var fs []string
				for _, f := range s.Fields {
					fs = append(fs, f.Path+"="+f.Old+"->"+f.New)
				}
				if s.Action != w.action || s.Slug != w.slug || (w.fields != "*" && strings.Join(fs, " ") != w.fields) {
					t.Errorf("step %d: got %s %s [%s], want %s %s [%s]", i, s.Action, s.Slug, strings.Join(fs, " "), w.action, w.slug, w.fields)
				}
				if (s.Action == Change || s.Action == Delete) && (s.ID == "" || s.Version == "") {
					t.Errorf("step %d: %s without the room's id and version", i, s.Action)
				}
			}
			if got := p.Changes(); got != (p.Count(Create)+p.Count(Change)+p.Count(Delete) > 0) {
				t.Errorf("Changes() = %v", got)
			}
		})
	}
}

func TestPlanWrite(t *testing.T) {
	a := mustParse(t, "room \"a\" {\n name = \"A\"\n rate_per_minute = 60\n}")[0]
	a2 := mustParse(t, "room \"a\" {\n name = \"A\"\n rate_per_minute = 60\n message = \""+strings.Repeat("m", 300)+"\"\n auto_rate {\n  rule {\n   metric = \"status\"\n   op = \"<\"\n   value = 500\n  }\n }\n}")[0]
	var out bytes.Buffer
	Diff([]Room{a2}, []Site{site("ra", a), site("rb", Room{Config: room.Config{Slug: "b"}})}, false).Write(&out)
	got := out.String()
	for _, want := range []string{
		`~ room "a" (ra) will be changed`,
		`    auto_rate.rule[0].op: (none) -> "<"`,
		`    message: "" -> "` + strings.Repeat("m", 79) + "…\n",
		`  room "b" (rb) is not in the file, kept (-destroy deletes it)`,
		"Plan: 0 to create, 1 to change, 0 to delete. 1 not in the file, kept.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan text lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	Diff([]Room{a}, []Site{site("ra", a)}, false).Write(&out)
	if got := out.String(); got != "No changes: the node matches the file.\n" {
		t.Errorf("got %q for an empty plan", got)
	}
}

func TestPlanCheck(t *testing.T) {
	a := mustParse(t, "room \"a\" {\n name = \"A\"\n rate_per_minute = 60\n}")[0]
	good := Diff([]Room{a}, nil, false)
	if err := good.Check(); err != nil {
		t.Fatalf("a plan from Diff was refused: %v", err)
	}
	bad := a.Config
	bad.RatePerMinute = 0
	for _, tc := range []struct {
		name string
		p    Plan
	}{
		{"no config", Plan{Steps: []Step{{Action: Create, Slug: "a"}}}},
		{"config of another room", Plan{Steps: []Step{{Action: Create, Slug: "b", Config: &a.Config}}}},
		{"invalid config", Plan{Steps: []Step{{Action: Create, Slug: "a", Config: &bad}}}},
		{"change without version", Plan{Steps: []Step{{Action: Change, Slug: "a", ID: "ra", Config: &a.Config}}}},
		{"delete without id", Plan{Steps: []Step{{Action: Delete, Slug: "a", Version: `"1"`}}}},
		{"unknown action", Plan{Steps: []Step{{Action: "drop", Slug: "a", ID: "x", Version: "1"}}}},
		{"bad slug", Plan{Steps: []Step{{Action: Delete, Slug: "../x", ID: "x", Version: "1"}}}},
	} {
		if err := tc.p.Check(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestHCLPath(t *testing.T) {
	for in, want := range map[string]string{
		"tokenTtlSeconds":            "token_ttl_seconds",
		"headerImageUrl":             "header_image_url",
		"autoRate.rules[0].metric":   "auto_rate.rule[0].metric",
		"autoRate.rules[10]":         "auto_rate.rule[10]",
		"autoRate.rules":             "auto_rate.rules",
		"events[2].endsAt":           "event[2].ends_at",
		"events[0].autoRate.minRate": "event[0].auto_rate.min_rate",
		"soldOutMessage.texts.fr":    "sold_out_message.texts.fr",
		"maintenanceMessage.linkUrl": "maintenance_message.link_url",
		"name":                       "name",
	} {
		if got := HCLPath(in); got != want {
			t.Errorf("HCLPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseEvents(t *testing.T) {
	rooms := mustParse(t, `
room "launch" {
  name            = "Launch"
  rate_per_minute = 60
  event {
    name          = "Main sale"
    starts_at     = "2030-03-01T10:00:00+01:00"
    ends_at       = "2030-03-01T12:00:00Z"
    prequeue_from = "2030-03-01T09:30:00+01:00"
    message       = "It starts"
    pow {
      enabled = true
      bits    = 20
    }
  }
  event {
    starts_at = "2030-03-02T10:00:00Z"
    ends_at   = "2030-03-02T12:00:00Z"
    mode      = "passthrough"
  }
}`)
	ev := rooms[0].Config.Events
	if len(ev) != 2 || ev[0].Name != "Main sale" || *ev[0].Message != "It starts" || ev[0].Pow == nil || ev[0].Pow.Bits != 20 || ev[1].Mode != "passthrough" {
		t.Fatalf("events: %+v", ev)
	}
	if ev[0].StartsAt != time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC) || ev[0].PrequeueFrom.Location() != time.UTC {
		t.Fatalf("event times not in UTC: %v %v", ev[0].StartsAt, ev[0].PrequeueFrom)
	}
}

// The admin token must not cross a network in the clear, and is required.
func TestNewClientRefuses(t *testing.T) {
	for _, tc := range []struct {
		url, token string
		allowHTTP  bool
		ok         bool
	}{
		{"http://localhost:8080", "t", false, true},
		{"http://127.0.0.1:8080/", "t", false, true},
		{"http://[::1]:8080", "t", false, true},
		{"https://queue.example.com", "t", false, true},
		{"http://queue.example.com", "t", false, false},
		{"http://10.0.0.5:8080", "t", false, false},
		{"http://10.0.0.5:8080", "t", true, true},
		{"http://localhost.example.com", "t", false, false},
		{"https://queue.example.com", " ", false, false},
		{"ftp://queue.example.com", "t", false, false},
		{"https://user:pw@queue.example.com", "t", false, false},
		{"queue.example.com", "t", false, false},
	} {
		_, err := NewClient(tc.url, tc.token, tc.allowHTTP)
		if (err == nil) != tc.ok {
			t.Errorf("NewClient(%q, allowHTTP %v): %v, want ok %v", tc.url, tc.allowHTTP, err, tc.ok)
		}
		if err != nil && tc.token != " " && strings.Contains(err.Error(), "pw") {
			t.Errorf("the error shows the URL's password: %v", err)
		}
	}
}
