package roomsfile

import (
	"encoding/json"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/room"
)

// FuzzParse: any file is refused or read into rooms the node would take,
// and a node holding exactly those rooms (as JSON, the way it answers)
// plans no change.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n}"))
	f.Add([]byte("room \"a\" {\n name = \"A\"\n rate_per_minute = 1\n auto_rate {\n  rule {\n   metric = \"m\"\n   op = \">\"\n   value = 1e3\n  }\n }\n}"))
	f.Add([]byte("room \"a\" {\n name = \"\\u00e9\"\n rate_per_minute = 1.5\n opens_at = \"2030-01-01T00:00:00-12:00\"\n}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		rooms, err := Parse(src, "f.hcl")
		if err != nil {
			return
		}
		var sites []Site
		for i, r := range rooms {
			if err := r.Config.Validate(); err != nil {
				t.Fatalf("room %q was read but is invalid: %v", r.Slug, err)
			}
			raw, err := json.Marshal(rooms[i].Config)
			if err != nil {
				t.Fatal(err)
			}
			var held room.Config
			if err := json.Unmarshal(raw, &held); err != nil {
				t.Fatal(err)
			}
			sites = append(sites, Site{ID: r.Slug, Version: `"1"`, Config: held})
		}
		if p := Diff(rooms, sites, true); p.Changes() {
			t.Fatalf("a node holding the file's rooms plans changes: %+v", p.Steps)
		}
	})
}
