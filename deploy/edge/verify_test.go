package edge

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

// checkVerifier feeds the table's tokens to a verifier program (stdin
// {"secret", "slug", "tokens"}, stdout {name: qnr or null}) and wants the
// valid one accepted with its number and every other refused.
func checkVerifier(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	r := newRoom("verify-room")
	toks := mintTokens(t, r, time.Now())
	in := map[string]string{"valid": toks.valid}
	for _, b := range toks.bad {
		in[b.name] = b.raw
	}
	body, _ := json.Marshal(map[string]any{"secret": r.secret, "slug": r.slug, "tokens": in})
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args, err, stderr.String())
	}
	var got map[string]*float64
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("got %q: %v", out, err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %d verdicts, want %d: %s", len(got), len(in), out)
	}
	for name := range in {
		n, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: no verdict", name)
		case name == "valid" && (n == nil || *n != 42):
			t.Errorf("valid token: got %v, want qnr 42", n)
		case name != "valid" && n != nil:
			t.Errorf("%s: accepted with qnr %v, want refused", name, *n)
		}
	}
}

// TestSeedVerifyTS runs the seed's verify.ts (jsonwebtoken) on our tokens.
func TestSeedVerifyTS(t *testing.T) {
	needRuntimes(t)
	checkVerifier(t, exec.Command("node", "--import", "tsx", here(t, "verify", "check.ts")))
}

// TestPyJWT runs the same check in Python with PyJWT on our tokens.
func TestPyJWT(t *testing.T) {
	needRuntimes(t)
	checkVerifier(t, exec.Command("/usr/bin/python3", here(t, "verify", "verify_pyjwt.py")))
}
