package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// The acceptance test drives the real OpenTofu CLI (deploy/terraform/
// build-tofu.sh builds it from source, once) with this provider built from
// here and installed through dev_overrides, against a real `aditus-queue
// serve` built from the parent module. It runs with TF_ACC=1 (CI:
// deploy/local/test.sh); AQ_TOFU names a tofu binary to use instead.

const accToken = "terraform-acc-admin-token-0123456789"

type acc struct {
	t      *testing.T
	tofu   string
	dir    string // the configuration
	env    []string
	base   string
	output bytes.Buffer // everything the CLI printed, checked for secrets
}

// TestMain removes the server the tests built.
func TestMain(m *testing.M) { testbin.Main(m) }

func TestAcceptance(t *testing.T) {
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("set TF_ACC=1 to run the provider against a real node and the OpenTofu CLI")
	}
	a := setUp(t)
	id := a.firstApply()
	a.changes(id)
	id = a.recreated(id)
	a.imported(id)
	a.run(0, "destroy", "-auto-approve")
	if a.siteBySlug("tf-sale") != nil {
		t.Fatal("the room outlived destroy")
	}
}

// firstApply creates the room, its key and its codes; plan is empty
// right after, and no secret is printed. It returns the room's id.
func (a *acc) firstApply() string {
	t := a.t
	a.write(roomTF(60, "2030-01-01T09:00:00Z"))
	a.run(0, "apply", "-auto-approve")
	a.plan(0, "plan right after apply")
	site := a.siteBySlug("tf-sale")
	if site["ratePerMinute"] != 60.0 || lookup(site, "pow", "enabled") != true || lookup(site, "messages", "de") != "Bitte warten" || site["opensAt"] != "2030-01-01T09:00:00Z" {
		t.Fatalf("room on the node: %v", site)
	}
	id := site["id"].(string)
	st := a.state()
	key, codes := st.value("aditus_api_key.ci", "key"), st.value("aditus_bypass_codes.vip", "codes")
	if k, _ := key.(string); !strings.HasPrefix(k, "qak_") {
		t.Fatalf("key in the state: %v", key)
	}
	if a.status("GET", "/api/admin/queue/sites/"+id, key.(string), nil) != 200 {
		t.Fatal("the key from the state does not reach its room")
	}
	if l, _ := codes.([]any); len(l) != 3 {
		t.Fatalf("codes in the state: %v", codes)
	}
	a.noSecretsPrinted(key.(string), codes.([]any), st.value("aditus_room.sale", "secret").(string))
	return id
}

// changes: an update keeps what the provider does not manage, a change in
// the console shows in the plan, and a room changed between plan and
// apply is a conflict, not overwritten.
func (a *acc) changes(id string) {
	t := a.t
	a.patch(id, func(s map[string]any) { s["autoRate"].(map[string]any)["raisePercent"] = 7 })
	a.write(roomTF(120, ""))
	a.run(0, "apply", "-auto-approve")
	site := a.siteBySlug("tf-sale")
	if site["ratePerMinute"] != 120.0 || site["opensAt"] != nil || lookup(site, "autoRate", "raisePercent") != 7.0 ||
		lookup(site, "soldOutMessage", "en") != "Sold out" {
		t.Fatalf("after the update: rate %v, opening %v, autoRate %v, sold-out message %v; want 120, none, the console's raise kept and the message",
			site["ratePerMinute"], site["opensAt"], site["autoRate"], site["soldOutMessage"])
	}
	a.plan(0, "plan after the update")
	a.patch(id, func(s map[string]any) { s["name"] = "Renamed in the console" })
	a.plan(2, "plan after a change in the console")

	a.run(2, "plan", "-detailed-exitcode", "-out", "tf.plan")
	a.patch(id, func(s map[string]any) { s["ratePerMinute"] = 77 })
	out := a.run(1, "apply", "tf.plan")
	if !strings.Contains(out, "changed on the node since it was read") {
		t.Fatalf("apply over a room changed since the plan:\n%s", out)
	}
	if s := a.siteBySlug("tf-sale"); s["ratePerMinute"] != 77.0 {
		t.Fatalf("the conflict overwrote the room: rate %v", s["ratePerMinute"])
	}
	a.run(0, "apply", "-auto-approve")
	a.plan(0, "plan after the conflict is resolved")
}

// recreated: a room deleted outside is created again by the next apply.
// It returns the new room's id.
func (a *acc) recreated(id string) string {
	if a.status("DELETE", "/api/admin/queue/sites/"+id, accToken, nil) != 204 {
		a.t.Fatal("delete outside")
	}
	a.plan(2, "plan after a deletion outside")
	a.run(0, "apply", "-auto-approve")
	site := a.siteBySlug("tf-sale")
	if site == nil || site["id"] == id {
		a.t.Fatalf("room after the apply: %v, want a new one", site)
	}
	a.plan(0, "plan after the room was recreated")
	return site["id"].(string)
}

// imported: the room, its key and its codes imported by id plan no change.
func (a *acc) imported(id string) {
	keyID := a.state().value("aditus_api_key.ci", "id").(string)
	a.run(0, "state", "rm", "aditus_room.sale", "aditus_api_key.ci", "aditus_bypass_codes.vip")
	a.run(0, "import", "aditus_room.sale", id)
	a.run(0, "import", "aditus_api_key.ci", id+"/"+keyID)
	a.run(0, "import", "aditus_bypass_codes.vip", id+"/vip")
	a.plan(0, "plan after import")
}

// A bad room is refused by validation, naming the attribute, before any
// request.
func TestAcceptanceValidation(t *testing.T) {
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("set TF_ACC=1")
	}
	a := setUp(t)
	a.write(strings.Replace(roomTF(60, ""), "rate_per_minute = 60", "rate_per_minute = 0", 1))
	out := a.run(1, "plan")
	if !strings.Contains(out, "rate_per_minute") || !strings.Contains(out, "must be at least 1") {
		t.Fatalf("plan of a bad room:\n%s", out)
	}
	a.write(roomTF(60, "2030-01-01T10:00:00+01:00"))
	out = a.run(1, "plan")
	if !strings.Contains(out, `write it as the node keeps it: "2030-01-01T09:00:00Z"`) {
		t.Fatalf("plan of an opening not in UTC:\n%s", out)
	}
	if a.siteBySlug("tf-sale") != nil {
		t.Fatal("a bad room reached the node")
	}
}

// roomTF is the configuration: a room at rate, opening at opens (none when
// empty), with a key and three codes.
func roomTF(rate int, opens string) string {
	if opens != "" {
		opens = fmt.Sprintf("opens_at = %q", opens)
	}
	return fmt.Sprintf(`
terraform {
  required_providers {
    aditus = { source = "aditus-queue/aditus" }
  }
}

provider "aditus" {}

resource "aditus_room" "sale" {
  slug            = "tf-sale"
  name            = "Sale"
  rate_per_minute = %d
  domains         = ["shop.example"]
  pow_enabled     = true
  messages        = { de = "Bitte warten" }
  sold_out_message_en    = "Sold out"
  sold_out_message_texts = { fr = "Épuisé" }
  %s
}

resource "aditus_api_key" "ci" {
  room_id = aditus_room.sale.id
  name    = "ci"
}

resource "aditus_bypass_codes" "vip" {
  room_id     = aditus_room.sale.id
  label       = "vip"
  quantity    = 3
  usage_limit = 1
}
`, rate, opens)
}

// setUp builds the provider and the server, starts serve (with extra
// flags) and writes the CLI configuration.
func setUp(t *testing.T, extra ...string) *acc {
	tmp := t.TempDir()
	a := &acc{t: t, dir: filepath.Join(tmp, "tf")}
	a.tofu = os.Getenv("AQ_TOFU")
	if a.tofu == "" {
		out, err := exec.Command("./build-tofu.sh").Output()
		if err != nil {
			t.Fatalf("build-tofu.sh: %v", err)
		}
		a.tofu = strings.TrimSpace(string(out))
	}
	plugins := filepath.Join(tmp, "plugins")
	provider := exec.Command("go", "build", "-o", filepath.Join(plugins, "terraform-provider-aditus"), ".")
	if out, err := provider.CombinedOutput(); err != nil {
		t.Fatalf("go build of the provider: %v\n%s", err, out)
	}
	_, a.base = testbin.Serve(t, filepath.Join(tmp, "data"), testbin.FreeAddr(t), append([]string{"--admin-token", accToken}, extra...)...)
	cliConfig := filepath.Join(tmp, "tofu.rc")
	writeFile(t, cliConfig, fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.opentofu.org/aditus-queue/aditus" = %q
  }
  direct {}
}
`, plugins))
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	a.env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "AQ_URL="+a.base, "AQ_ADMIN_TOKEN="+accToken,
		"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_INPUT=0", "TF_LOG=")
	return a
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (a *acc) write(tf string) { writeFile(a.t, filepath.Join(a.dir, "main.tf"), tf) }

// run runs `tofu args…` in the configuration and wants exit code want.
func (a *acc) run(want int, args ...string) string {
	a.t.Helper()
	args = append([]string{}, args...)
	if args[0] != "state" {
		args = append(args, "-no-color")
	}
	cmd := exec.Command(a.tofu, args...)
	cmd.Dir, cmd.Env = a.dir, a.env
	out, err := cmd.CombinedOutput()
	a.output.Write(out)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatal(err)
	}
	if code != want {
		a.t.Fatalf("tofu %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
	}
	return string(out)
}

// plan wants `tofu plan -detailed-exitcode` to exit want: 0 no change, 2
// changes.
func (a *acc) plan(want int, what string) {
	a.t.Helper()
	a.t.Log(what)
	a.run(want, "plan", "-detailed-exitcode")
}

type tfState struct {
	Values struct {
		RootModule struct {
			Resources []struct {
				Address string         `json:"address"`
				Values  map[string]any `json:"values"`
			} `json:"resources"`
		} `json:"root_module"`
	} `json:"values"`
}

func (a *acc) state() tfState {
	a.t.Helper()
	cmd := exec.Command(a.tofu, "show", "-json")
	cmd.Dir, cmd.Env = a.dir, a.env
	out, err := cmd.Output()
	if err != nil {
		a.t.Fatalf("tofu show -json: %v", err)
	}
	var st tfState
	if err := json.Unmarshal(out, &st); err != nil {
		a.t.Fatal(err)
	}
	return st
}

func (s tfState) value(addr, name string) any {
	for _, r := range s.Values.RootModule.Resources {
		if r.Address == addr {
			return r.Values[name]
		}
	}
	return nil
}

// noSecretsPrinted checks that nothing the CLI printed holds a secret.
func (a *acc) noSecretsPrinted(key string, codes []any, roomSecret string) {
	a.t.Helper()
	secrets := []string{key, roomSecret, accToken}
	for _, c := range codes {
		secrets = append(secrets, c.(string))
	}
	for _, s := range secrets {
		if s == "" || strings.Contains(a.output.String(), s) {
			a.t.Fatalf("a secret (%d characters) is empty or in the CLI's output", len(s))
		}
	}
}

func (a *acc) call(method, path, token string, body any, out any) int {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, a.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

func (a *acc) status(method, path, token string, body any) int {
	return a.call(method, path, token, body, nil)
}

func (a *acc) siteBySlug(slug string) map[string]any {
	a.t.Helper()
	var list struct {
		Sites []map[string]any `json:"sites"`
	}
	a.call("GET", "/api/admin/queue/sites", accToken, nil, &list)
	for _, s := range list.Sites {
		if s["slug"] == slug {
			return s
		}
	}
	return nil
}

// patch changes room id as the console would.
func (a *acc) patch(id string, change func(map[string]any)) {
	a.t.Helper()
	var s map[string]any
	a.call("GET", "/api/admin/queue/sites/"+id, accToken, nil, &s)
	change(s)
	if code := a.call("PATCH", "/api/admin/queue/sites/"+id, accToken, s, nil); code != 200 {
		a.t.Fatalf("PATCH outside: %d", code)
	}
}

func lookup(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, _ := cur.(map[string]any)
		cur = mm[k]
	}
	return cur
}

const proxyHCL = `host "shop.example.com" {
  location "/" {
    upstream "127.0.0.1:9" {}
    waiting_room {
      active         = 500
      on_store_error = "wait"
    }
  }
}
`

func capacityTF(settings string) string {
	return `
terraform {
  required_providers {
    aditus = { source = "aditus-queue/aditus" }
  }
}

resource "aditus_capacity_room" "shop" {
  host = "shop.example.com"
  name = "/"
  ` + settings + `
}
`
}

// A capacity room's runtime settings: adopted, changed, put back to the
// proxies' file when left out or destroyed, imported by id.
func TestAcceptanceCapacity(t *testing.T) {
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("set TF_ACC=1")
	}
	proxy := filepath.Join(t.TempDir(), "proxy.hcl")
	writeFile(t, proxy, proxyHCL)
	a := setUp(t, "--proxy-config", proxy, "--proxy-addr", "127.0.0.1:0")
	id := a.capacityID()
	a.write(capacityTF("active = 800\n  paused = true"))
	a.run(0, "apply", "-auto-approve")
	a.plan(0, "plan right after apply")
	if rt := a.runtime(id); rt["active"] != 800.0 || rt["paused"] != true {
		t.Fatalf("runtime after apply: %v", rt)
	}
	a.write(capacityTF("active = 800"))
	a.run(0, "apply", "-auto-approve")
	if rt := a.runtime(id); rt["active"] != 800.0 || rt["paused"] != nil {
		t.Fatalf("runtime with paused left out: %v, want it back to the file's", rt)
	}
	a.plan(0, "plan after the reset")
	a.write(capacityTF("address_budget_burst = 5"))
	if out := a.run(1, "plan"); !strings.Contains(out, "go together") {
		t.Fatalf("half an address budget:\n%s", out)
	}
	a.write(capacityTF("active = 800"))
	a.run(0, "state", "rm", "aditus_capacity_room.shop")
	a.run(0, "import", "aditus_capacity_room.shop", id)
	a.plan(0, "plan after import")
	a.run(0, "destroy", "-auto-approve")
	if rt := a.runtime(id); rt["active"] != nil {
		t.Fatalf("runtime after destroy: %v, want the file's", rt)
	}
}

// capacityID waits for the proxy's room to be announced, and returns its id.
func (a *acc) capacityID() string {
	a.t.Helper()
	var id string
	testwait.UntilEvery(a.t, 15*time.Second, 100*time.Millisecond, "the proxy's capacity room listed", func() bool {
		var list struct {
			Rooms []struct{ ID string } `json:"rooms"`
		}
		if a.call("GET", "/api/admin/queue/capacity", accToken, nil, &list) != 200 || len(list.Rooms) != 1 {
			return false
		}
		id = list.Rooms[0].ID
		return true
	})
	return id
}

func (a *acc) runtime(id string) map[string]any {
	a.t.Helper()
	var st struct {
		Runtime map[string]any `json:"runtime"`
	}
	if code := a.call("GET", "/api/admin/queue/capacity/"+id, accToken, nil, &st); code != 200 {
		a.t.Fatalf("GET capacity room: %d", code)
	}
	return st.Runtime
}
