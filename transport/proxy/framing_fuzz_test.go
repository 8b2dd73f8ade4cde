package proxy

import (
	"strings"
	"testing"
)

// FuzzFraming sends generated request bytes (the table's rows mutated)
// over a raw connection to a real proxy, on every visitor server and the
// upstream client fast chooses, and checks the table's oracle: the
// upstream sees exactly the requests the gate decided to forward, in
// normalised form, and never one for the full room.
func FuzzFraming(f *testing.F) {
	for _, row := range framingRows {
		if len(row.req) <= maxFuzzRequest {
			f.Add(false, []byte(row.req))
			f.Add(true, []byte(row.req))
		}
	}
	f.Fuzz(func(t *testing.T, fast bool, req []byte) {
		if len(req) > maxFuzzRequest {
			return
		}
		fw := ForwardStd
		if fast {
			fw = ForwardFast
		}
		for _, vs := range visitorServers {
			rig := newFramingRig(t, vs, fw)
			_, err := rig.send(t, req, -1)
			rig.finish(t)
			for _, s := range rig.check(t) {
				if strings.HasPrefix(s, "GET /checkout") || strings.Contains(s, " /checkout") {
					t.Errorf("%s: the upstream saw %q past the full room", vs.name, s)
				}
			}
			if err != nil {
				t.Errorf("%s: reading the answers: %v", vs.name, err)
			}
		}
	})
}

// maxFuzzRequest bounds the generated requests (the table's oversize rows
// stay out of the seeds).
const maxFuzzRequest = 16 << 10
