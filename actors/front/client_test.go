package front

import (
	"context"
	"strings"
	"testing"

	"github.com/aditus-queue/aditus-queue/actors/protocol"
)

// Client.Admin sends only the table's administrative operations.
func TestClientAdminAllowList(t *testing.T) {
	c := &Client{}
	for _, op := range []string{"redeem", "join-batch", "token", "sync", "stats", "create", "join", "nonsense"} {
		err := c.Admin(context.Background(), "r1", op, protocol.AdminRequest{}, nil)
		if err == nil || !strings.Contains(err.Error(), "unknown admin operation") {
			t.Errorf("Admin(%q): got %v, want unknown admin operation", op, err)
		}
	}
}
