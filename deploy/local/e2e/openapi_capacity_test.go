package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/internal/testwait"
)

// capacityProxyFlags writes a proxy file with one capacity room and
// returns the flags that make serve run its proxy too: the room then
// appears in the admin API once the proxy has announced it.
func capacityProxyFlags(t *testing.T) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "rooms.hcl")
	hcl := `host "shop.example.com" {
  location "/" {
    upstream "127.0.0.1:9" {}
    waiting_room {
      active         = 500
      on_store_error = "wait"
    }
  }
}
`
	if err := os.WriteFile(file, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--proxy-config", file, "--proxy-addr", "127.0.0.1:0"}
}

// driveCapacity records the answers of the capacity rooms' operations:
// the list (once the proxy announced its room), a room's state, a change
// and its refusals.
func driveCapacity(c *docClient) {
	t := c.t
	const admin = docAdminToken
	list := "/api/admin/queue/capacity"
	id := ""
	testwait.Until(t, 15*time.Second, "the proxy's capacity room listed", func() bool {
		st, _, b := c.raw("GET", list, admin, nil)
		var l struct {
			Rooms []struct{ ID string } `json:"rooms"`
		}
		if st == http.StatusOK && json.Unmarshal(b, &l) == nil && len(l.Rooms) > 0 {
			id = l.Rooms[0].ID
		}
		return id != ""
	})
	c.call(200, "GET", list, admin, nil)
	room := list + "/" + id
	testwait.Until(t, 15*time.Second, "the proxy's capacity room served", func() bool {
		st, _, _ := c.raw("GET", room, admin, nil)
		return st == http.StatusOK
	})
	got := c.call(200, "GET", room, admin, nil)
	if got == nil {
		return
	}
	c.call(404, "GET", list+"/c00000000000000000000", admin, nil)
	c.call(404, "GET", list+"/not-a-room", admin, nil)
	changed := c.call(200, "PATCH", room, admin, map[string]any{"version": 0, "active": 800, "paused": true})
	if rt, _ := changed["runtime"].(map[string]any); rt == nil || rt["active"] != float64(800) || rt["version"] != float64(1) {
		t.Errorf("after the change: %v", changed["runtime"])
	}
	c.call(409, "PATCH", room, admin, map[string]any{"version": 0, "active": 900})
	c.call(409, "PATCH", room, admin, map[string]any{"active": 900}, "If-Match", `"0"`)
	c.call(400, "PATCH", room, admin, map[string]any{"version": 1, "active": 0})
	c.call(400, "PATCH", room, admin, map[string]any{"version": 1, "active": 10_000_001})
	c.call(400, "PATCH", room, admin, "{")
	c.call(200, "PATCH", room, admin, map[string]any{"reset": []string{"paused"}}, "If-Match", `"1"`)
}
