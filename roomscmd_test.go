package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The flags are refused before anything is read or sent, and the token
// never comes from the command line (it would be in the shell's history
// and the process list).
func TestRoomsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "name the rooms file with -f"},
		{[]string{"apply", "-f", "a.hcl", "-plan", "p.json"}, "name the rooms file with -f"},
		{[]string{"apply", "-plan", "p.json", "-destroy"}, "-destroy goes with plan"},
		{[]string{"plan", "-f", "a.hcl", "--admin-token", "s3cret-token-value"}, "not taken on the command line"},
		{[]string{"plan", "-f", "a.hcl", "-admin-token=s3cret-token-value"}, "not taken on the command line"},
		{[]string{"plan", "-f", "a.hcl", "extra"}, `unexpected argument "extra"`},
		{[]string{"plan", "-plan", "p.json"}, "flag provided but not defined: -plan"},
		{[]string{"drop"}, "usage: aditus-queue rooms plan"},
	} {
		var out, errOut bytes.Buffer
		code := runRooms(context.Background(), tc.args, &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("rooms %v: exit %d, %q; want 1 and %q", tc.args, code, errOut.String(), tc.want)
		}
		if strings.Contains(out.String()+errOut.String(), "s3cret-token-value") {
			t.Errorf("rooms %v: the token is repeated", tc.args)
		}
	}
}
