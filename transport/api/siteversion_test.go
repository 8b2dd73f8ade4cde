package api

import (
	"net/http"
	"testing"
)

// A settings form read before a mode switch and saved with its version
// is refused with 409, and the mode stays; saved with the new version, or
// without one, it is written.
func TestStaleSiteWriteIsRefused(t *testing.T) {
	e := newEnv(t)
	id, _ := e.createRoom("stale", 60)
	path := "/api/admin/queue/sites/" + id
	_, form, h := e.do("GET", path, adminTok, nil)
	etag := h.Get("ETag")
	if etag != `"`+form["updatedAt"].(string)+`"` {
		t.Fatalf("ETag %q, want the quoted updatedAt %v", etag, form["updatedAt"])
	}
	switched := e.patchSite(id, func(s map[string]any) { s["mode"] = "soldOut" })

	form["message"] = "Saved from an old form."
	if st, m, _ := e.do("PATCH", path, adminTok, form, "If-Match", etag); st != http.StatusConflict || m["error"] != "conflict" {
		t.Fatalf("stale write: %d %v, want 409 conflict", st, m)
	}
	for _, bad := range []string{`"yesterday"`, `W/"1"`} {
		if st, _, _ := e.do("PATCH", path, adminTok, form, "If-Match", bad); st != http.StatusConflict {
			t.Fatalf("If-Match %s: %d, want 409", bad, st)
		}
	}
	if _, s, _ := e.do("GET", path, adminTok, nil); s["mode"] != "soldOut" || s["message"] == form["message"] {
		t.Fatalf("after the refused write: mode %v message %v, want soldOut and the message unchanged", s["mode"], s["message"])
	}
	switched["message"] = "Saved from a fresh form."
	st, m, h2 := e.do("PATCH", path, adminTok, switched, "If-Match", `"`+switched["updatedAt"].(string)+`"`)
	if st != 200 || m["mode"] != "soldOut" || m["message"] != "Saved from a fresh form." || h2.Get("ETag") == etag {
		t.Fatalf("fresh write: %d %v (ETag %s)", st, m, h2.Get("ETag"))
	}
	if st, _, _ := e.do("PATCH", path, adminTok, form); st != 200 {
		t.Fatalf("write without If-Match: %d, want 200 as before", st)
	}
}
