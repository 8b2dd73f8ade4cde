package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testbin"
	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// TestProxyReloadOnSIGHUP sends SIGHUP to a real proxy process holding a
// visitor inside and one in line, after adding a host with a room to its
// file: the new host serves, the holder is still inside and the waiter
// still first; a file that does not parse is refused and the process
// keeps serving the configuration in force.
func TestProxyReloadOnSIGHUP(t *testing.T) {
	s := newShop(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "proxy.hcl")
	src := fmt.Sprintf(capacityConfig, s.addr(), 1, "5m")
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testbin.FreeAddr(t)
	p := testbin.Start(t, "proxy", "--config", cfg, "--addr", addr, "--data-dir", filepath.Join(dir, "data"))
	base := "http://" + addr
	testwait.Until(t, 30*time.Second, "the proxy answering", func() bool {
		res, err := http.Get(base + "/")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	cookies := comeBack(t, base, 200, 503)
	added := src + fmt.Sprintf(`host "tickets.test" {
  location "/" {
    upstream "%s" {}
  }
}
`, s.addr())
	if err := os.WriteFile(cfg, []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the reload", func() bool { return strings.Contains(p.Output(), "configuration reloaded") })
	if st, _, _ := raw(t, base, "tickets.test", "/", ""); st != 200 {
		t.Fatalf("the added host: %d, want 200", st)
	}
	if st, body, _ := raw(t, base, "shop.test", "/", cookies[1]); st != 503 || !strings.Contains(body, `id="position">1<`) {
		t.Fatalf("the waiter after the reload: %d, want 503 at place 1:\n%.400s", st, body)
	}
	if st, _, _ := raw(t, base, "shop.test", "/", cookies[0]); st != 200 {
		t.Fatalf("the slot holder after the reload: %d, want 200", st)
	}
	if err := os.WriteFile(cfg, []byte(`host "shop.test" {`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the refusal", func() bool { return strings.Contains(p.Output(), "configuration not reloaded") })
	if st, _, _ := raw(t, base, "tickets.test", "/", ""); st != 200 {
		t.Fatalf("after a refused reload: %d, want 200 from the configuration in force", st)
	}
	if p.Cmd.ProcessState != nil {
		t.Fatal("the proxy ended on SIGHUP")
	}
}
