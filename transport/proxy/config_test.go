package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/capacity"
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
		{"bad trusted proxy", "server {\n trusted_proxies = [\"10.0.0.0/33\"]\n}\n", `f.hcl:1: server: trusted_proxies: trusted proxy "10.0.0.0/33"`},
		{"cookie_secure yes", "server {\n cookie_secure = \"yes\"\n}\n", `f.hcl:2: server: cookie_secure must be true, false or "auto"`},
		{"cookie_secure number", "server {\n cookie_secure = 1\n}\n", `f.hcl:2: server: cookie_secure must be true, false or "auto"`},
		{"two servers", "server {}\nserver {}\n", "f.hcl:2: server is defined twice"},
		{"unverifiable user agent", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  rule \"r\" {\n   bypass {\n    user_agents = [\"MyMonitor\"]\n   }\n  }\n }\n}\n", `f.hcl:5: rule "r": user_agents "MyMonitor" names no crawler that can be verified by DNS`},
		{"location not canonical", "host \"a\" {\n location \"/static/../checkout\" {\n  upstream \"x:1\" {}\n }\n}\n", `f.hcl:2: location "/static/../checkout": requests are matched on their canonical path, which is written "/checkout"`},
		{"prefix not canonical", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  rule \"r\" {\n   and {\n    path { prefix = \"//checkout\" }\n   }\n   bypass {\n    paths = [\"/x\"]\n   }\n  }\n }\n}\n", `f.hcl:4: rule "r": prefix "//checkout": requests are matched`},
		{"bypass path refused", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  rule \"r\" {\n   bypass {\n    paths = [\"/a%2Fb\"]\n   }\n  }\n }\n}\n", `f.hcl:5: rule "r": paths "/a%2Fb": path refused: an encoded /`},
		{"empty user agent", "host \"a\" {\n location \"/\" {\n  upstream \"x:1\" {}\n  rule \"r\" {\n   bypass {\n    user_agents = [\"\"]\n    unverified = true\n   }\n  }\n }\n}\n", `f.hcl:5: rule "r": user_agents: an empty entry`},
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

func TestServerBlockAndBypass(t *testing.T) {
	src := `server {
  trusted_proxies = ["10.0.0.0/8", "192.0.2.7", "2001:db8::/32"]
  cookie_secure   = true
}
host "a" {
  location "/" {
    upstream "x:1" {}
    rule "robots" {
      bypass { user_agents = ["Googlebot", "bingbot"] }
    }
    rule "monitor" {
      bypass {
        user_agents = ["MyMonitor"]
        unverified  = true
      }
    }
  }
}
`
	cfg, err := Parse("f.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cfg.Server.TrustedProxies); got != "[10.0.0.0/8 192.0.2.7/32 2001:db8::/32]" || cfg.Server.CookieSecure != CookieSecureAlways {
		t.Fatalf("server: got %s %v", got, cfg.Server.CookieSecure)
	}
	b := cfg.Hosts["a"].Locations[0].Bypass
	if len(b) != 2 || b[0].Unverified || b[0].Crawlers[0].Name != "Googlebot" || b[0].Crawlers[1].Name != "Bingbot" || !b[1].Unverified {
		t.Fatalf("bypass: got %+v", b)
	}
	for mode, want := range map[string]CookieSecure{`"auto"`: CookieSecureAuto, "false": CookieSecureNever, "true": CookieSecureAlways} {
		cfg, err := Parse("f.hcl", []byte("server {\n cookie_secure = "+mode+"\n}\n"))
		if err != nil || cfg.Server.CookieSecure != want {
			t.Errorf("cookie_secure = %s: got %v %v, want %v", mode, cfg, err, want)
		}
	}
	if cfg, err := Parse("f.hcl", nil); err != nil || cfg.Server.CookieSecure != CookieSecureAuto || cfg.Server.TrustedProxies != nil {
		t.Fatalf("no server block: got %+v %v, want auto and no trusted proxy", cfg, err)
	}
}

// TestConfigPowAuto: pow_auto's defaults, its bounds, and its refusal in a
// block that names a rate room.
func TestConfigPowAuto(t *testing.T) {
	parse := func(block string) (*Room, error) {
		cfg, err := Parse("t.hcl", []byte(`host "shop.test" {
  location "/" {
    static_files { directory = "." }
    waiting_room {
      on_store_error = "wait"
      `+block+`
    }
  }
}`))
		if err != nil {
			return nil, err
		}
		return cfg.Hosts["shop.test"].Locations[0].Rooms[0].Room, nil
	}
	r, err := parse("active = 5\n pow_auto {}")
	if err != nil || r.Settings.Pow != (capacity.PowAuto{PerMinute: capacity.DefaultPowAutoPerMinute, Bits: capacity.DefaultPowAutoBits, MaxBits: 20}) {
		t.Fatalf("pow_auto {}: %+v %v", r, err)
	}
	r, err = parse("active = 5\n pow_auto {\n arrivals_per_minute = 120\n bits = 10\n max_bits = 16\n }")
	if err != nil || r.Settings.Pow != (capacity.PowAuto{PerMinute: 120, Bits: 10, MaxBits: 16}) {
		t.Fatalf("pow_auto with values: %+v %v", r, err)
	}
	if r, err = parse("active = 5"); err != nil || r.Settings.Pow.On() {
		t.Fatalf("no pow_auto block: %+v %v", r, err)
	}
	for _, bad := range []string{
		"active = 5\n pow_auto { bits = 25 }",
		"active = 5\n pow_auto {\n bits = 12\n max_bits = 10\n }",
		"active = 5\n pow_auto { max_bits = 25 }",
		"active = 5\n pow_auto { arrivals_per_minute = 0 }",
		`room = "launch"` + "\n pow_auto {}",
		"active = 5\n pow_auto { factor = 2 }",
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
