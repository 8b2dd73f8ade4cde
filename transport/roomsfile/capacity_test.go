package roomsfile

import (
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

func TestParseCapacity(t *testing.T) {
	f, err := ParseFile([]byte(`
capacity_room "shop.example.com" "/" {
  active = 800
  open   = false
  pow {
    per_minute = 600
    bits       = 12
    max_bits   = 20
  }
}
room "a" {
  name            = "A"
  rate_per_minute = 1
}`), "f.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rooms) != 1 || len(f.Capacity) != 1 {
		t.Fatalf("got %d rooms and %d capacity rooms, want 1 and 1", len(f.Rooms), len(f.Capacity))
	}
	c := f.Capacity[0]
	if c.Host != "shop.example.com" || c.Name != "/" || *c.Runtime.Active != 800 || *c.Runtime.Open || c.Runtime.Paused != nil ||
		*c.Runtime.Pow != (CapacityPow{PerMinute: 600, Bits: 12, MaxBits: 20}) || c.Runtime.AddressBudget != nil {
		t.Fatalf("capacity room: %+v", c)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"one label", "capacity_room \"h\" {\n}", "f.hcl:1: a capacity_room block takes two labels"},
		{"active 0", "capacity_room \"h\" \"/\" {\n active = 0\n}", "f.hcl:2: capacity room h /: active: must be 1–10,000,000"},
		{"bits", "capacity_room \"h\" \"/\" {\n pow {\n  bits = 30\n }\n}", "f.hcl:3: capacity room h /: pow.bits:"},
		{"budget without burst", "capacity_room \"h\" \"/\" {\n address_budget {\n  per_minute = 5\n }\n}", "f.hcl:2: capacity room h /: address_budget.burst:"},
		{"unknown", "capacity_room \"h\" \"/\" {\n session = 5\n}", `f.hcl:2: unknown field "session"`},
		{"twice", "capacity_room \"h\" \"/\" {\n}\ncapacity_room \"h\" \"/\" {\n}", "f.hcl:3: capacity room h / is declared twice (first at line 1)"},
	} {
		if _, err := ParseFile([]byte(tc.src), "f.hcl"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDiffCapacity(t *testing.T) {
	n, yes := 800, true
	want := []CapacityRoom{{Host: "h", Name: "/", Runtime: CapacityRuntime{Active: &n}}}
	id := "c0123456789abcdef0123"
	for _, tc := range []struct {
		name   string
		have   CapacityRuntime
		fields string
		reset  string
	}{
		{"the file's values in force: set", CapacityRuntime{}, "active=->800", ""},
		{"the same: nothing", CapacityRuntime{Active: &n}, "", ""},
		{"a pause the file does not name: reset", CapacityRuntime{Active: &n, Paused: &yes}, "paused=true->", "paused"},
		{"a budget the file does not name: reset", CapacityRuntime{Active: &n, AddressBudget: &room.AddressBudget{PerMinute: 5, Burst: 9}},
			"addressBudget.burst=9-> addressBudget.perMinute=5->", "addressBudget"},
	} {
		steps, err := DiffCapacity(want, []CapacityState{{ID: id, Host: "h", Name: "/", Version: `"3"`, Runtime: tc.have}})
		if err != nil {
			t.Fatal(err)
		}
		if tc.fields == "" {
			if len(steps) != 0 {
				t.Errorf("%s: got %+v, want no step", tc.name, steps)
			}
			continue
		}
		var fs []string
		for _, f := range steps[0].Fields {
			fs = append(fs, f.Path+"="+f.Old+"->"+f.New)
		}
		if s := steps[0]; s.Action != Adjust || s.ID != id || s.Version != `"3"` || strings.Join(fs, " ") != tc.fields || strings.Join(s.Reset, ",") != tc.reset {
			t.Errorf("%s: got %s %s [%s] reset %v, want [%s] reset %q", tc.name, s.Action, s.ID, strings.Join(fs, " "), s.Reset, tc.fields, tc.reset)
		}
		if err := (Plan{Steps: steps}).Check(); err != nil {
			t.Errorf("%s: the plan's own step is refused: %v", tc.name, err)
		}
	}
	if _, err := DiffCapacity(want, nil); err == nil || !strings.Contains(err.Error(), "no proxy node serves it") {
		t.Errorf("a capacity room nobody serves: %v", err)
	}
	bad := []Step{{Action: Adjust, Slug: "h /", ID: "../x", Version: `"1"`, Capacity: &CapacityRuntime{}},
		{Action: Adjust, Slug: "h /", ID: id, Version: `"1"`, Capacity: &CapacityRuntime{}, Reset: []string{"session"}},
		{Action: Adjust, Slug: "h /", ID: id, Version: `"1"`}}
	for i, s := range bad {
		if err := (Plan{Steps: []Step{s}}).Check(); err == nil {
			t.Errorf("bad adjust step %d accepted", i)
		}
	}
}
