package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aditus-queue/aditus-queue/actors/token"
	"github.com/aditus-queue/aditus-queue/persistence"
	"github.com/aditus-queue/aditus-queue/persistence/memlog"
)

func (w *world) addCode(id string, body map[string]any) map[string]any {
	w.t.Helper()
	st, m, _ := w.do("POST", "/api/admin/queue/sites/"+id+"/bypass-codes", adminTok, body)
	if st != http.StatusCreated {
		w.t.Fatalf("create bypass code %v: %d %v", body, st, m)
	}
	return m
}

func TestBypassCodeAdmin(t *testing.T) {
	l := memlog.New()
	w := newWorld(t, l, newStillClock())
	id, _ := w.createRoom("vip", 60)
	base := "/api/admin/queue/sites/" + id + "/bypass-codes"
	expires := w.clock.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)

	c := w.addCode(id, map[string]any{"label": "Press", "usageLimit": 5, "expiresAt": expires.Format(time.RFC3339)})
	code, _ := c["code"].(string)
	if keysOf(c) != "code,createdAt,disabled,expiresAt,id,label,usageLimit,uses" || len(code) < 20 || c["label"] != "Press" ||
		c["usageLimit"] != 5.0 || c["uses"] != 0.0 || c["disabled"] != false || c["expiresAt"] != expires.Format(time.RFC3339) {
		t.Fatalf("created code: %v", c)
	}
	codeID := c["id"].(string)
	open := w.addCode(id, map[string]any{"label": "Partners"})
	if open["usageLimit"] != nil || open["expiresAt"] != nil {
		t.Fatalf("code without limit and expiry: %v", open)
	}

	// The code is shown once: the listing has everything but the code.
	st, list, _ := w.do("GET", base, adminTok, nil)
	codes, _ := list["codes"].([]any)
	if st != 200 || len(codes) != 2 {
		t.Fatalf("list: %d %v", st, list)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), code) || strings.Contains(string(b), `"code"`) {
		t.Fatalf("the listing shows the code again: %s", b)
	}
	var listed map[string]any
	for _, c := range codes {
		if c.(map[string]any)["id"] == codeID {
			listed = c.(map[string]any)
		}
	}
	if listed == nil || listed["label"] != "Press" || listed["usageLimit"] != 5.0 || listed["uses"] != 0.0 || listed["disabled"] != false {
		t.Fatalf("listed code %s: %v", codeID, listed)
	}

	// Only the hash is kept: the code stands nowhere in the log, its hash does.
	var inLog bytes.Buffer
	if _, err := l.Replay(context.Background(), id, -1, func(r persistence.Record) error {
		inLog.Write(r.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{code, strings.ReplaceAll(code, "-", ""), strings.ToLower(code)} {
		if bytes.Contains(inLog.Bytes(), []byte(form)) {
			t.Fatalf("the log holds the code %q in clear", form)
		}
	}
	if !bytes.Contains(inLog.Bytes(), []byte(base64.StdEncoding.EncodeToString(sha(code)))) {
		t.Fatal("the log does not hold the code's hash")
	}

	// Disable, enable, delete.
	if st, m, _ := w.do("PATCH", base+"/"+codeID, adminTok, map[string]any{"disabled": true}); st != 200 || m["disabled"] != true || m["code"] != nil {
		t.Fatalf("disable: %d %v", st, m)
	}
	if st, m, _ := w.do("PATCH", base+"/"+codeID, adminTok, map[string]any{}); st != 422 || m["field"] != "disabled" {
		t.Fatalf("patch without disabled: %d %v", st, m)
	}
	if st, m, _ := w.do("PATCH", base+"/"+codeID, adminTok, map[string]any{"disabled": false}); st != 200 || m["disabled"] != false {
		t.Fatalf("enable: %d %v", st, m)
	}
	if st, m, _ := w.do("PATCH", base+"/cnope", adminTok, map[string]any{"disabled": true}); st != 404 {
		t.Fatalf("patch of an unknown code: %d %v", st, m)
	}
	if st, _, _ := w.do("DELETE", base+"/"+open["id"].(string), adminTok, nil); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	if st, _, _ := w.do("DELETE", base+"/"+open["id"].(string), adminTok, nil); st != 404 {
		t.Fatalf("delete again: %d", st)
	}
	if _, list, _ := w.do("GET", base, adminTok, nil); len(list["codes"].([]any)) != 1 {
		t.Fatalf("after delete: %v", list)
	}

	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"usage limit 0", map[string]any{"label": "x", "usageLimit": 0}, "usageLimit"},
		{"negative usage limit", map[string]any{"label": "x", "usageLimit": -3}, "usageLimit"},
		{"expiry in the past", map[string]any{"label": "x", "expiresAt": w.clock.Now().Add(-time.Minute).Format(time.RFC3339)}, "expiresAt"},
		{"expiry now", map[string]any{"label": "x", "expiresAt": w.clock.Now().Format(time.RFC3339)}, "expiresAt"},
		{"no label", map[string]any{"usageLimit": 3}, "label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m, _ := w.do("POST", base, adminTok, tc.body)
			if st != 422 || m["field"] != tc.field || m["error"] != "invalid" {
				t.Fatalf("got %d %v, want 422 naming %s", st, m, tc.field)
			}
		})
	}
	// Codes are the operator's: an API key of the room cannot see them.
	_, k, _ := w.do("POST", "/api/admin/queue/sites/"+id+"/keys", adminTok, map[string]any{"name": "runbook"})
	if st, _, _ := w.do("GET", base, k["key"].(string), nil); st != 403 {
		t.Fatalf("codes listed with an API key: %d", st)
	}
	if st, _, _ := w.do("POST", base, k["key"].(string), map[string]any{"label": "x"}); st != 403 {
		t.Fatalf("code created with an API key: %d", st)
	}
}

// bypass redeems code through POST /bypass.
func (w *world) bypass(slug, code string) (int, http.Header, []byte) {
	w.t.Helper()
	return w.raw("POST", "/queue/"+slug+"/bypass", map[string]any{"code": code})
}

func TestBypassRedeem(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, secret := w.createRoom("vip", 60)
	code := w.addCode(id, map[string]any{"label": "Press"})["code"].(string)

	st, _, b := w.bypass("vip", code)
	var a map[string]any
	_ = json.Unmarshal(b, &a)
	if st != 200 || keysOf(a) != "expiresInSeconds,targetUrl,token" || a["targetUrl"] != "https://shop.example.com/tickets" ||
		a["expiresInSeconds"].(float64) < 590 {
		t.Fatalf("redeem: %d %s", st, b)
	}
	cl, err := token.Verify([]byte(secret), "vip", a["token"].(string), w.clock.Now())
	if err != nil || !cl.Bypass || cl.Number != 0 {
		t.Fatalf("bypass token: %+v %v, want byp true and qnr 0", cl, err)
	}
	// People type codes: any case, spaces around.
	if st, _, b := w.bypass("vip", "  "+strings.ToLower(code)+" "); st != 200 {
		t.Fatalf("redeem in lower case: %d %s", st, b)
	}
	if st, m, _ := w.do("POST", "/queue/nope/bypass", "", map[string]any{"code": code}); st != 404 {
		t.Fatalf("redeem in an unknown room: %d %v", st, m)
	}
	if st, m, _ := w.do("POST", "/queue/vip/bypass", "", "{not json"); st != 400 {
		t.Fatalf("malformed body: %d %v", st, m)
	}
}

// Every code that does not work gets the very same answer: status, body and
// headers (but Date), byte for byte.
func TestBypassRefusedAlike(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, _ := w.createRoom("vip", 60)
	soon := w.clock.Now().Add(time.Minute).Format(time.RFC3339)
	expired := w.addCode(id, map[string]any{"label": "Soon over", "expiresAt": soon})["code"].(string)
	once := w.addCode(id, map[string]any{"label": "Once", "usageLimit": 1})["code"].(string)
	disabled := w.addCode(id, map[string]any{"label": "Off"})
	good := w.addCode(id, map[string]any{"label": "Good"})["code"].(string)
	w.do("PATCH", "/api/admin/queue/sites/"+id+"/bypass-codes/"+disabled["id"].(string), adminTok, map[string]any{"disabled": true})
	if st, _, b := w.bypass("vip", once); st != 200 {
		t.Fatalf("first use of a single-use code: %d %s", st, b)
	}
	w.clock.Advance(2 * time.Minute)

	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	var answers []answer
	names := []string{"invalid", "empty", "expired", "exhausted", "disabled", "paused room"}
	for _, c := range []string{"AAAAA-BBBBB-CCCCC-DDDDD", "", expired, once, disabled["code"].(string)} {
		st, h, b := w.bypass("vip", c)
		answers = append(answers, answer{st, h, b})
	}
	w.patchSite(id, func(s map[string]any) { s["active"] = false })
	st, h, b := w.bypass("vip", good)
	answers = append(answers, answer{st, h, b})

	want := answers[0]
	if want.status != 404 || string(want.body) != `{"error":"not_found","message":"Not found."}`+"\n" {
		t.Fatalf("invalid code: %d %q", want.status, want.body)
	}
	for i, a := range answers {
		a.header.Del("Date")
		if a.status != want.status || !bytes.Equal(a.body, want.body) {
			t.Errorf("%s: got %d %q, want %d %q", names[i], a.status, a.body, want.status, want.body)
		}
		if got, w := headerBytes(a.header), headerBytes(want.header); got != w {
			t.Errorf("%s: headers\n%s\nwant\n%s", names[i], got, w)
		}
	}
	// Resumed, the good code works again.
	w.patchSite(id, func(s map[string]any) { s["active"] = true })
	if st, _, b := w.bypass("vip", good); st != 200 {
		t.Fatalf("good code after resume: %d %s", st, b)
	}
}

func headerBytes(h http.Header) string {
	var b bytes.Buffer
	_ = h.Write(&b)
	return b.String()
}

// A redemption takes no regular slot: serving, waiting and the next join's
// place are what they would be without it.
func TestBypassTakesNoSlot(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock()) // the clock stands still
	id, _ := w.createRoom("vip", 60)                // burst 5: five at once, then one a second
	code := w.addCode(id, map[string]any{"label": "Press"})["code"].(string)
	for i := range 6 {
		st, j, _ := w.do("POST", "/queue/vip/join", "", nil)
		if st != 200 || j["admitted"] != (i < 5) {
			t.Fatalf("join %d: %d %v", i+1, st, j)
		}
	}
	_, before, _ := w.do("GET", "/queue/vip/info", "", nil)
	for range 10 {
		if st, _, b := w.bypass("vip", code); st != 200 {
			t.Fatalf("redeem: %d %s", st, b)
		}
	}
	_, after, _ := w.do("GET", "/queue/vip/info", "", nil)
	if before["serving"] != 5.0 || before["waiting"] != 1.0 || after["serving"] != before["serving"] || after["waiting"] != before["waiting"] {
		t.Fatalf("info before %v, after ten redemptions %v", before, after)
	}
	st, j, _ := w.do("POST", "/queue/vip/join", "", nil)
	if st != 200 || j["number"] != 7.0 || j["admitted"] != false || j["ahead"] != 1.0 || j["serving"] != 5.0 {
		t.Fatalf("the join after ten redemptions: %d %v, want number 7, one ahead", st, j)
	}
	w.clock.Advance(time.Second)
	st, s, _ := w.do("GET", "/queue/vip/status?number=6", "", nil)
	if st != 200 || s["admitted"] != true || s["serving"] != 6.0 {
		t.Fatalf("a second later: %d %v, want number 6 admitted", st, s)
	}
	_, list, _ := w.do("GET", "/api/admin/queue/sites/"+id+"/bypass-codes", adminTok, nil)
	if uses := list["codes"].([]any)[0].(map[string]any)["uses"]; uses != 10.0 {
		t.Fatalf("uses: %v, want 10", uses)
	}
}

// Fifty redemptions at once of a code good for ten: exactly ten tokens.
func TestBypassConcurrentRedemptionsKeepTheLimit(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, _ := w.createRoom("vip", 60)
	code := w.addCode(id, map[string]any{"label": "Fan club", "usageLimit": 10})["code"].(string)
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Fifty clients: each has its own budget of attempts.
			st, _, _ := w.attempt(fmt.Sprintf("198.51.100.%d", i), code, false)
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if got[200] != 10 || got[404] != 40 {
		t.Fatalf("50 concurrent redemptions of a 10-use code: got %v, want 10 × 200 and 40 × 404", got)
	}
	_, list, _ := w.do("GET", "/api/admin/queue/sites/"+id+"/bypass-codes", adminTok, nil)
	if uses := list["codes"].([]any)[0].(map[string]any)["uses"]; uses != 10.0 {
		t.Fatalf("uses: %v, want 10", uses)
	}
}

// The gateway link with ?code=: a valid code goes straight to the shop with
// a bypass token; anything else falls through to the normal path, exactly
// as if no code had been given.
func TestGatewayWithCode(t *testing.T) {
	w := newWorld(t, memlog.New(), newStillClock())
	id, secret := w.createRoom("vip", 60) // burst 5
	code := w.addCode(id, map[string]any{"label": "Press", "usageLimit": 1})["code"].(string)
	tokenOf := func(loc string) *token.Claims {
		t.Helper()
		u, err := url.Parse(loc)
		if err != nil || !strings.HasPrefix(loc, "https://shop.example.com/tickets?") {
			t.Fatalf("not a redirect to the shop: %s", loc)
		}
		cl, err := token.Verify([]byte(secret), "vip", u.Query().Get("aditus_queue_token"), w.clock.Now())
		if err != nil {
			t.Fatalf("token in %s: %v", loc, err)
		}
		return cl
	}
	st, _, h := w.do("GET", "/queue/vip/enter?code="+url.QueryEscape(strings.ToLower(code)), "", nil)
	if cl := tokenOf(h.Get("Location")); st != 302 || !cl.Bypass || cl.Number != 0 {
		t.Fatalf("valid code at the gateway: %d %+v", st, cl)
	}
	// Used up now: it falls through like no code. With capacity free, that
	// is the shop with a regular token.
	st, _, h = w.do("GET", "/queue/vip/enter?code="+url.QueryEscape(code), "", nil)
	if cl := tokenOf(h.Get("Location")); st != 302 || cl.Bypass || cl.Number != 1 {
		t.Fatalf("spent code at the gateway with capacity free: %d %+v, want a regular token for number 1", st, cl)
	}
	for range 4 {
		w.do("GET", "/queue/vip/enter", "", nil)
	}
	// The burst is used: with a wrong code, as with none, into the room.
	for _, q := range []string{"?code=WRONG-CODE", "?code=", ""} {
		st, _, h := w.do("GET", "/queue/vip/enter"+q, "", nil)
		loc := h.Get("Location")
		if st != 302 || !strings.HasPrefix(loc, "http://queue.test/queue/vip?ticket=") || strings.Contains(loc, "code") {
			t.Fatalf("enter%s with the room full: %d %s, want the waiting room with a ticket", q, st, loc)
		}
	}
	// A code beats proof of work and a full room alike.
	w.patchSite(id, func(s map[string]any) { s["pow"] = map[string]any{"enabled": true} })
	code2 := w.addCode(id, map[string]any{"label": "Partners"})["code"].(string)
	st, _, h = w.do("GET", "/queue/vip/enter?code="+code2, "", nil)
	if cl := tokenOf(h.Get("Location")); st != 302 || !cl.Bypass {
		t.Fatalf("valid code with proof of work on: %d %+v", st, cl)
	}
}
