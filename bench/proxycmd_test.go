package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestProxyCommandRefusesBadFlags: a bad client or count is a usage error
// before anything starts.
func TestProxyCommandRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--clients", "fast,quick"},
		{"--rounds", "0"},
		{"--duration", "100ms"},
	} {
		var out, errw bytes.Buffer
		if code := Main(context.Background(), append([]string{"proxy"}, args...), &out, &errw); code != ExitUsage || !strings.Contains(errw.String(), "bench proxy:") {
			t.Errorf("%v: exit %d, %q", args, code, errw.String())
		}
	}
}
