package actors

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/aditus-queue/aditus-queue/"

// sideRule says what the packages under pkgs must not depend on: never,
// not even through other packages; direct, not by an import of their own.
type sideRule struct {
	pkgs   string
	never  []string
	direct []string
}

var (
	// assembled is the grain side and the assembly: what only a member runs.
	assembled = []string{"actors/grain", "actors/membership", "actors/node"}
	// rules are the import rules between the sides (doc.go). The HTTP side
	// and the dashboard talk to the cluster through the front only; the
	// grains never call the front; the cluster's membership knows neither
	// the rooms' rules nor HTTP.
	rules = []sideRule{
		{pkgs: "transport/", never: assembled},
		{pkgs: "dashboard/", never: assembled},
		{pkgs: "actors/protocol", never: append([]string{"actors/front"}, assembled...)},
		{pkgs: "actors/front", never: []string{"actors/grain", "actors/node"}},
		{pkgs: "actors/grain", never: []string{"actors/front", "actors/node", "transport/", "dashboard/"}},
		{pkgs: "actors/membership",
			never: []string{"actors/room", "actors/capacity", "actors/loadtest", "actors/protocol",
				"actors/front", "actors/grain", "actors/node", "transport/", "dashboard/"},
			direct: []string{"net/http", "github.com/labstack/echo"}},
	}
)

// helpers are test helpers (two start a whole node for the tests of the
// packages they sit in; one waits for a condition; one checks answers
// against the API document; one builds the command for the tests that run
// it); they are left out of the rules, and only
// tests and other helpers may import them.
var helpers = map[string]bool{
	"transport/api/apitest": true, "actors/node/nodetest": true, "internal/testwait": true, "transport/api/apidoc": true,
	"internal/testbin": true,
}

// listed is what go list tells of one package.
type listed struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
}

// TestSidesKeepTheirImports fails when a package's own code (its tests
// aside) depends on a side it must not, or on a test helper.
func TestSidesKeepTheirImports(t *testing.T) {
	pkgs := listModule(t)
	checked := 0
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok || helpers[rel] {
			continue
		}
		for _, d := range p.Imports {
			if h, ok := strings.CutPrefix(d, module); ok && helpers[h] {
				t.Errorf("%s imports the test helper %s outside its tests", rel, h)
			}
		}
		for _, r := range rules {
			if !under(rel, r.pkgs) {
				continue
			}
			checked++
			for _, bad := range crossings(p, r) {
				t.Errorf("%s depends on %s, which it must not (actors/sides_test.go)", rel, bad)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked: the rules no longer name the tree's packages", checked)
	}
}

// crossings are p's dependencies that rule r forbids.
func crossings(p listed, r sideRule) []string {
	var out []string
	for _, d := range p.Deps {
		if rel, ok := strings.CutPrefix(d, module); ok && matchesAny(rel, r.never) {
			out = append(out, rel)
		}
	}
	for _, d := range p.Imports {
		if matchesAny(d, r.direct) {
			out = append(out, d)
		}
	}
	return out
}

func matchesAny(path string, prefixes []string) bool {
	for _, pre := range prefixes {
		if under(path, pre) {
			return true
		}
	}
	return false
}

// under reports whether path is prefix or inside it; a prefix ending in /
// is a folder, any other a package (actors/grain holds actors/grain/x,
// not actors/grainx).
func under(path, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(path, prefix)
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// listModule lists every package of the module with go list.
func listModule(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Imports,Deps", module+"...")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []listed
	dec := json.NewDecoder(out)
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	return pkgs
}
