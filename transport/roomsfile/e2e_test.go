package roomsfile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
	"github.com/aditus-queue/aditus-queue/transport/roomsfile"
)

// These tests build the real binary, run a real `serve` on its embedded
// log, and drive `rooms plan` and `rooms apply` as an operator would.

const testToken = "rooms-e2e-admin-token-0123456789"

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) { testbin.Main(m) }

// binary is the command, built once; -short skips the tests that run it.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	return testbin.Binary(t)
}

// node is a running `aditus-queue serve`.
type node struct {
	*testbin.Proc
	base string
}

func startNode(t *testing.T, dataDir string, extra ...string) *node {
	t.Helper()
	binary(t) // skips under -short
	p, base := testbin.Serve(t, dataDir, testbin.FreeAddr(t), append([]string{"--admin-token", testToken}, extra...)...)
	return &node{Proc: p, base: base}
}

// rooms runs `aditus-queue rooms …` against n with the token in the
// environment, and returns its exit code and output.
func rooms(t *testing.T, n *node, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"rooms"}, args...)...)
	cmd.Env = append(os.Environ(), "AQ_ADMIN_TOKEN="+testToken, "AQ_URL="+n.base)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), testToken) {
		t.Fatalf("the admin token is in the output:\n%s", out)
	}
	return code, string(out)
}

func expect(t *testing.T, what string, code int, out string, wantCode int, wants ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("%s: exit %d, want %d:\n%s", what, code, wantCode, out)
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("%s: output lacks %q:\n%s", what, w, out)
		}
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

func client(t *testing.T, n *node) *roomsfile.Client {
	t.Helper()
	c, err := roomsfile.NewClient(n.base, testToken, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func siteBySlug(t *testing.T, n *node, slug string) (roomsfile.Site, bool) {
	t.Helper()
	sites, err := client(t, n).Sites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		if s.Config.Slug == slug {
			return s, true
		}
	}
	return roomsfile.Site{}, false
}

const twoRooms = `
room "sale" {
  name            = "Sale"
  rate_per_minute = %d
  domains         = ["shop.example"]
  pow {
    enabled = true
    bits    = 16
  }
}

room "vip" {
  name            = "VIP"
  rate_per_minute = 10
  messages        = { de = "Bitte warten" }
}
`

func TestRoomsPlanApply(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, filepath.Join(dir, "data"))
	file, secrets := filepath.Join(dir, "rooms.hcl"), filepath.Join(dir, "secrets")
	writeFile(t, file, fmt.Sprintf(twoRooms, 60))

	code, out := rooms(t, n, "plan", "-f", file)
	expect(t, "first plan", code, out, 2, `+ room "sale" will be created`, "    pow.bits = 16", `+ room "vip" will be created`, "Plan: 2 to create, 0 to change, 0 to delete.")
	code, out = rooms(t, n, "apply", "-f", file, "--secrets-file", secrets)
	expect(t, "first apply", code, out, 0, `created room "sale"`, `created room "vip"`)
	checkSecrets(t, secrets, out)
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan after apply", code, out, 0, "No changes: the node matches the file.")

	writeFile(t, file, fmt.Sprintf(twoRooms, 120))
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan of a change", code, out, 2, `~ room "sale"`, "    rate_per_minute: 60 -> 120", "Plan: 0 to create, 1 to change, 0 to delete.")
	code, out = rooms(t, n, "apply", "-f", file)
	expect(t, "apply of a change", code, out, 0, `changed room "sale"`)
	if s, _ := siteBySlug(t, n, "sale"); s.Config.RatePerMinute != 120 {
		t.Fatalf("rate on the node: %v, want 120", s.Config.RatePerMinute)
	}
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan after the change", code, out, 0, "No changes")

	// vip leaves the file: kept until -destroy.
	writeFile(t, file, strings.Split(fmt.Sprintf(twoRooms, 120), `room "vip"`)[0])
	vip, _ := siteBySlug(t, n, "vip")
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan without vip", code, out, 0, `room "vip" (`+vip.ID+`) is not in the file, kept`)
	code, out = rooms(t, n, "apply", "-f", file)
	expect(t, "apply without -destroy", code, out, 0)
	if _, ok := siteBySlug(t, n, "vip"); !ok {
		t.Fatal("vip was deleted without -destroy")
	}
	code, out = rooms(t, n, "plan", "-f", file, "-destroy")
	expect(t, "plan -destroy", code, out, 2, `- room "vip" (`+vip.ID+`) will be deleted`)
	code, out = rooms(t, n, "apply", "-f", file, "-destroy")
	expect(t, "apply -destroy", code, out, 0, `deleted room "vip"`)
	if _, err := client(t, n).Site(context.Background(), vip.ID); !roomsfile.IsNotFound(err) {
		t.Fatalf("vip after apply -destroy: %v, want 404", err)
	}
	code, out = rooms(t, n, "plan", "-f", file, "-destroy")
	expect(t, "plan after -destroy", code, out, 0, "No changes")
}

func checkSecrets(t *testing.T, path, out string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "sale ") || !strings.HasPrefix(lines[1], "vip ") {
		t.Fatalf("secrets file: %q, want a line for sale and one for vip", raw)
	}
	for _, l := range lines {
		secret := strings.Fields(l)[1]
		if len(secret) < 16 || strings.Contains(out, secret) {
			t.Fatalf("secret %q is short or printed:\n%s", secret, out)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file mode %v, want 0600", fi.Mode().Perm())
	}
}

// A room changed by someone else between plan and apply is a conflict:
// reported, exit 1, and the other change stays.
func TestRoomsApplyConflict(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, filepath.Join(dir, "data"))
	file, planFile := filepath.Join(dir, "rooms.hcl"), filepath.Join(dir, "plan.json")
	writeFile(t, file, fmt.Sprintf(twoRooms, 60))
	code, out := rooms(t, n, "apply", "-f", file)
	expect(t, "apply", code, out, 0)

	writeFile(t, file, fmt.Sprintf(twoRooms, 90))
	code, out = rooms(t, n, "plan", "-f", file, "-out", planFile)
	expect(t, "plan -out", code, out, 2, "rate_per_minute: 60 -> 90")

	// Another operator saves the room from the console meanwhile.
	c := client(t, n)
	sale, _ := siteBySlug(t, n, "sale")
	cur, err := c.Site(context.Background(), sale.ID)
	if err != nil {
		t.Fatal(err)
	}
	cur.Config.Name = "Sale (edited in the console)"
	if _, err := c.Update(context.Background(), sale.ID, cur.Version, cur.Config); err != nil {
		t.Fatal(err)
	}

	code, out = rooms(t, n, "apply", "-plan", planFile)
	expect(t, "apply of the older plan", code, out, 1, `conflict: room "sale" changed on the node since the plan read it`)
	after, _ := siteBySlug(t, n, "sale")
	if after.Config.Name != "Sale (edited in the console)" || after.Config.RatePerMinute != 60 {
		t.Fatalf("after the conflict: name %q rate %v, want the console's edit kept and the rate unchanged", after.Config.Name, after.Config.RatePerMinute)
	}

	// A fresh plan shows both: the file's rate and the console's name.
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan after the conflict", code, out, 2, "rate_per_minute: 60 -> 90", `name: "Sale (edited in the console)" -> "Sale"`)

	// A saved plan that was tampered with is refused before any request.
	var p roomsfile.Plan
	raw, _ := os.ReadFile(planFile)
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p.Steps[0].Config.RatePerMinute = 0
	raw, _ = json.Marshal(p)
	writeFile(t, planFile, string(raw))
	code, out = rooms(t, n, "apply", "-plan", planFile)
	expect(t, "apply of a bad saved plan", code, out, 1, "ratePerMinute")
}

// A bad file is refused with file and line, before anything is sent: the
// node's rooms stay as they were.
func TestRoomsBadFile(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, filepath.Join(dir, "data"))
	file := filepath.Join(dir, "rooms.hcl")
	writeFile(t, file, "room \"ok\" {\n  name = \"OK\"\n  rate_per_minute = 5\n}\nroom \"bad\" {\n  name = \"Bad\"\n  rate_per_minute = 5\n  colour = \"red\"\n}\n")
	code, out := rooms(t, n, "apply", "-f", file)
	expect(t, "apply of a bad file", code, out, 1, file+`:8: unknown field "colour"`)
	if sites, err := client(t, n).Sites(context.Background()); err != nil || len(sites) != 0 {
		t.Fatalf("after a refused file: %d rooms (%v), want none", len(sites), err)
	}
	code, out = rooms(t, n, "plan", "-f", file, "--admin-token="+testToken)
	if code != 1 || !strings.Contains(out, "not taken on the command line") {
		t.Fatalf("a token on the command line: exit %d:\n%s", code, out)
	}
}

// The operator restores the node from yesterday's backup: the rooms come
// back as they were then, and the file brings them up to date again.
func TestRoomsAfterRestore(t *testing.T) {
	dir := t.TempDir()
	data, backup, restored := filepath.Join(dir, "data"), filepath.Join(dir, "backup"), filepath.Join(dir, "restored")
	n := startNode(t, data)
	file := filepath.Join(dir, "rooms.hcl")
	writeFile(t, file, fmt.Sprintf(twoRooms, 60))
	code, out := rooms(t, n, "apply", "-f", file)
	expect(t, "apply", code, out, 0)
	if out, err := exec.Command(binary(t), "backup", "--data-dir", data, "--to", backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	writeFile(t, file, fmt.Sprintf(twoRooms, 240))
	code, out = rooms(t, n, "apply", "-f", file)
	expect(t, "apply after the backup", code, out, 0, `changed room "sale"`)
	n.Term()

	if out, err := exec.Command(binary(t), "restore", "--from", backup, "--data-dir", restored).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	n = startNode(t, restored)
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan after the restore", code, out, 2, "rate_per_minute: 60 -> 240")
	code, out = rooms(t, n, "apply", "-f", file)
	expect(t, "apply after the restore", code, out, 0)
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan after catching up", code, out, 0, "No changes")
}

const proxyFile = `host "shop.example.com" {
  location "/" {
    upstream "127.0.0.1:9" {}
    waiting_room {
      active         = 500
      on_store_error = "wait"
    }
  }
}
`

// A capacity room's runtime settings: set, reset to the proxies' file
// when the rooms file leaves them out, and a conflict with a change made
// in the console after the plan.
func TestRoomsCapacity(t *testing.T) {
	dir := t.TempDir()
	proxyConfig := filepath.Join(dir, "proxy.hcl")
	writeFile(t, proxyConfig, proxyFile)
	n := startNode(t, filepath.Join(dir, "data"), "--proxy-config", proxyConfig, "--proxy-addr", "127.0.0.1:0")
	c := client(t, n)
	var room roomsfile.CapacityState
	testwait.UntilEvery(t, 15*time.Second, 100*time.Millisecond, "the proxy's capacity room listed", func() bool {
		rooms, err := c.CapacityRooms(context.Background())
		if err != nil || len(rooms) != 1 {
			return false
		}
		room = rooms[0]
		return true
	})
	file, planFile := filepath.Join(dir, "rooms.hcl"), filepath.Join(dir, "plan.json")
	writeFile(t, file, "capacity_room \"shop.example.com\" \"/\" {\n  active = 800\n  paused = true\n}\n")
	code, out := rooms(t, n, "plan", "-f", file)
	expect(t, "plan", code, out, 2, "~ capacity room shop.example.com / ("+room.ID+") will be adjusted", "active: (none) -> 800", "paused: (none) -> true")
	code, out = rooms(t, n, "apply", "-f", file)
	expect(t, "apply", code, out, 0, "adjusted capacity room shop.example.com /")
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan after apply", code, out, 0, "No changes")

	writeFile(t, file, "capacity_room \"shop.example.com\" \"/\" {\n  active = 800\n}\n")
	code, out = rooms(t, n, "apply", "-f", file)
	expect(t, "apply without paused", code, out, 0, "paused: true -> (none)")
	now := capacityRuntime(t, c, room.ID)
	if now.Runtime.Paused != nil || now.Runtime.Active == nil || *now.Runtime.Active != 800 {
		t.Fatalf("runtime after the reset: %+v", now.Runtime)
	}

	writeFile(t, file, "capacity_room \"shop.example.com\" \"/\" {\n  active = 900\n}\n")
	code, out = rooms(t, n, "plan", "-f", file, "-out", planFile)
	expect(t, "plan -out", code, out, 2, "active: 800 -> 900")
	if _, err := c.Do(context.Background(), "PATCH", "/api/admin/queue/capacity/"+room.ID, now.Version, map[string]any{"active": 850}, nil); err != nil {
		t.Fatal(err)
	}
	code, out = rooms(t, n, "apply", "-plan", planFile)
	expect(t, "apply of the older plan", code, out, 1, "conflict: room \"shop.example.com /\" changed on the node since the plan read it")
	if now = capacityRuntime(t, c, room.ID); *now.Runtime.Active != 850 {
		t.Fatalf("the conflict overwrote the console's change: %+v", now.Runtime)
	}

	writeFile(t, file, "capacity_room \"other.example.com\" \"/\" {\n  active = 5\n}\n")
	code, out = rooms(t, n, "plan", "-f", file)
	expect(t, "plan of a room no proxy serves", code, out, 1, "capacity room other.example.com /: no proxy node serves it")
}

func capacityRuntime(t *testing.T, c *roomsfile.Client, id string) roomsfile.CapacityState {
	t.Helper()
	rooms, err := c.CapacityRooms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rooms {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("capacity room %s not listed", id)
	return roomsfile.CapacityState{}
}
