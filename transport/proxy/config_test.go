package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedExample reads a seed 004 example from testdata with the upstream and
// the files it names moved to dir (the only changes).
func seedExample(t *testing.T, name, upstream, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "shop:3000", upstream)
	s = strings.ReplaceAll(s, "/etc/proksi/waiting.html", filepath.Join(dir, "waiting.html"))
	s = strings.ReplaceAll(s, "/srv/waiting", filepath.Join(dir, "static"))
	_ = os.MkdirAll(filepath.Join(dir, "static"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "waiting.html"), []byte("<p>{position} of {waiting}</p>"), 0o644)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSeedExamplesParse(t *testing.T) {
	for _, name := range []string{"seed004_basic.hcl", "seed004_page.hcl", "seed004_rule.hcl"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Load(seedExample(t, name, "127.0.0.1:3000", t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			h := cfg.Hosts["shop.example.com"]
			if h == nil || h.Locations[len(h.Locations)-1].Upstream.Host != "127.0.0.1:3000" {
				t.Fatalf("host or upstream missing: %+v", h)
			}
		})
	}
}

func TestConfigDefaultsAndRule(t *testing.T) {
	cfg, err := Load(seedExample(t, "seed004_rule.hcl", "127.0.0.1:3000", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	rr := cfg.Hosts["shop.example.com"].Locations[0].Rooms[0]
	if rr.Room.Name != "checkout" || rr.Room.Settings.Active != 200 || rr.Room.Settings.Session != 5*time.Minute ||
		rr.Room.Settings.Refresh != 10*time.Second || !rr.Room.AdmitOnStoreError || rr.Prefixes[0] != "/checkout" {
		t.Fatalf("got %+v %+v", rr, rr.Room)
	}
}

func TestConfigErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown attribute", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  waiting_room {\n   active = 1\n   on_store_error = \"admit\"\n   colour = \"red\"\n  }\n }\n}\n", `f.hcl:7: Unsupported argument: An argument named "colour" is not expected here`},
		{"unknown block", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  cache {}\n }\n}\n", `f.hcl:4: Unsupported block type: Blocks of type "cache" are not expected here`},
		{"missing active", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  waiting_room {\n   on_store_error = \"admit\"\n  }\n }\n}\n", "f.hcl:4: waiting_room: active is required"},
		{"bad on_store_error", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  waiting_room {\n   active = 2\n   on_store_error = \"maybe\"\n  }\n }\n}\n", `f.hcl:4: waiting_room: on_store_error must be "admit" or "wait"`},
		{"bad session", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  waiting_room {\n   active = 2\n   on_store_error = \"wait\"\n   session = \"soon\"\n  }\n }\n}\n", `f.hcl:4: waiting_room: session "soon"`},
		{"rule without name", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  rule \"r\" {\n   then {\n    waiting_room {\n     active = 2\n     on_store_error = \"wait\"\n    }\n   }\n  }\n }\n}\n", "f.hcl:6: rule \"r\": a rule's waiting_room needs a name"},
		{"syntax", "host \"a\" {\n location \"/\" {\n", "f.hcl:"},
		{"no upstream", "host \"a\" {\n location \"/\" {\n }\n}\n", "f.hcl:2: location \"/\": needs an upstream or static_files block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.hcl", []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("got %q, want one line starting %q", msg, tc.want)
			}
		})
	}
}

func TestPagePlaceholders(t *testing.T) {
	p := parsePage([]byte("<meta content=\"{refresh}\">{position}/{waiting} {other} {"))
	if got := string(p.render(2, 7, 10)); got != "<meta content=\"10\">2/7 {other} {" {
		t.Fatalf("got %q", got)
	}
	if got := string(p.render(0, 0, 10)); got != "<meta content=\"10\">…/… {other} {" {
		t.Fatalf("store down: got %q", got)
	}
}
