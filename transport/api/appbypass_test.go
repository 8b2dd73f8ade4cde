package api

import (
	"net/http"
	"net/url"
	"testing"
)

// An app following /enter with a bypass code is admitted at once with a
// bypass token, as a browser is redirected with one; a code that does not
// work falls through to a number, with no hint; the code's uses count.
func TestAppEnterHonoursBypassCode(t *testing.T) {
	e, _, id, _ := modesWorld(t)
	_, code, _ := e.do("POST", "/api/admin/queue/sites/"+id+"/bypass-codes", adminTok, map[string]any{"label": "press", "usageLimit": 1})
	for range 5 { // the burst: the next number waits
		e.app("/queue/modes")
	}
	st, a, _ := e.app("/queue/modes/enter?code=" + url.QueryEscape(code["code"].(string)))
	tok, _ := a["token"].(string)
	if st != 200 || a["state"] != "admitted" || tok == "" || a["ticket"] != nil || a["targetUrl"] != "https://shop.example.com/tickets" {
		t.Fatalf("app with a bypass code: %d %v", st, a)
	}
	if st, v, _ := e.do("GET", "/queue/modes/verify?token="+url.QueryEscape(tok), "", nil); st != 200 || v["bypass"] != true || v["number"] != 0.0 {
		t.Fatalf("the app's token: %d %v, want a bypass token", st, v)
	}
	// Used up: the same code now falls through to the line like any visitor.
	st, a, _ = e.app("/queue/modes/enter?code=" + url.QueryEscape(code["code"].(string)))
	if st != http.StatusOK || a["state"] != "waiting" || a["ticket"] == nil {
		t.Fatalf("app with a used-up code: %d %v, want a number in the line", st, a)
	}
	if _, l, _ := e.do("GET", "/api/admin/queue/sites/"+id+"/bypass-codes", adminTok, nil); l["codes"].([]any)[0].(map[string]any)["uses"] != 1.0 {
		t.Fatalf("code uses: %v", l)
	}
}
