package check

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// composeFile is deploy/docker-compose.yml, from this module's directory.
var composeFile = filepath.Join("..", "..", "docker-compose.yml")

// loadCompose loads a compose file as `docker compose` does (compose-go's
// loader: the Compose specification's schema, which refuses unknown keys,
// then interpolation of env and the merge of the x- anchors).
func loadCompose(t *testing.T, content []byte, env map[string]string) (*types.Project, error) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Dir(composeFile))
	if err != nil {
		t.Fatal(err)
	}
	details := types.ConfigDetails{WorkingDir: dir, Environment: env,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(dir, "docker-compose.yml"), Content: content}}}
	return loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("aditus-queue", true)
	})
}

func readCompose(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var composeEnv = map[string]string{"AQ_MASTER_KEY": strings.Repeat("ab", 32), "AQ_ADMIN_TOKEN": strings.Repeat("cd", 24)}

// The compose file is valid Compose, and its cluster is the one
// deploy/local/cluster.sh runs: a broker, three members that know each
// other, a front publishing its ports on loopback only, and members given
// the time to hand their rooms over when stopped.
func TestComposeFile(t *testing.T) {
	p, err := loadCompose(t, readCompose(t), composeEnv)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	names := p.ServiceNames()
	slices.Sort(names)
	if want := []string{"front", "kafka", "member1", "member2", "member3"}; !slices.Equal(names, want) {
		t.Fatalf("services %v, want %v", names, want)
	}
	for _, name := range []string{"member1", "member2", "member3", "front"} {
		s := p.Services[name]
		roles := "front,actor"
		if name == "front" {
			roles = "front"
		}
		if i := slices.Index(s.Command, "--roles"); i < 0 || i+1 >= len(s.Command) || s.Command[i+1] != roles {
			t.Errorf("%s: command %v, want --roles %s", name, s.Command, roles)
		}
		env := func(k string) string {
			if v := s.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if env("AQ_CLUSTER_ADVERTISE") != name || env("AQ_PEERS") != "member1:6330,member2:6330,member3:6330" ||
			env("AQ_MASTER_KEY") != composeEnv["AQ_MASTER_KEY"] || env("AQ_LOG") != "kafka" {
			t.Errorf("%s: environment %v", name, s.Environment)
		}
		// A member hands its rooms over before it stops (memberLeave)
		// after serve's drain.
		need := time.Duration(serveShutdown+memberLeave) * time.Second
		if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) < need {
			t.Errorf("%s: stop_grace_period %v, want at least %v", name, s.StopGracePeriod, need)
		}
		if _, ok := s.DependsOn["kafka"]; !ok {
			t.Errorf("%s does not depend on kafka", name)
		}
	}
	for _, port := range p.Services["front"].Ports {
		if port.HostIP != "127.0.0.1" {
			t.Errorf("the front publishes %s:%d on %q, not on loopback", port.Published, port.Target, port.HostIP)
		}
	}
	for _, name := range []string{"member1", "member2", "member3", "kafka"} {
		if ports := p.Services[name].Ports; len(ports) != 0 {
			t.Errorf("%s publishes ports %v", name, ports)
		}
	}
}

// Without the master key the file does not load: no node starts with one
// made up.
func TestComposeFileNeedsTheMasterKey(t *testing.T) {
	_, err := loadCompose(t, readCompose(t), map[string]string{"AQ_ADMIN_TOKEN": "x"})
	if err == nil || !strings.Contains(err.Error(), "AQ_MASTER_KEY") {
		t.Fatalf("without AQ_MASTER_KEY: %v, want an error naming it", err)
	}
}

// A misspelt key fails the schema: the check is not a pass-through.
func TestComposeSchemaRefusesUnknownKeys(t *testing.T) {
	b := readCompose(t)
	bad := strings.Replace(string(b), "stop_grace_period:", "stop_grace_periode:", 1)
	if bad == string(b) {
		t.Fatal("docker-compose.yml has no stop_grace_period to misspell")
	}
	if _, err := loadCompose(t, []byte(bad), composeEnv); err == nil || !strings.Contains(err.Error(), "stop_grace_periode") {
		t.Fatalf("a compose file with stop_grace_periode: %v, want a schema error naming it", err)
	}
}
